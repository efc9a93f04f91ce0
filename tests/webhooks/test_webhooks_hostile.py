"""Hostile deliveries, end to end: signed bodies of every odd shape go through the receiver over
HTTP and then `events load`. A 200 is always loaded or dead-lettered, never a stop: the next valid
delivery is always loaded (issue 19, items 1 and 10, and its hypothesis property)."""

from __future__ import annotations

import copy
import itertools
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shipsync.warehouse.upsert import sql_types
from shipsync.webhooks.http_limits import ConnectionGuard
from shipsync.webhooks.limits import ReceiverLimits
from shipsync.webhooks.receiver import Receiver
from shipsync.webhooks.writer import SpoolWriter
from shipsync_sandbox.serving import BackgroundServer
from support.hostile_deliveries import CORPUS, NOT_NOTIFICATIONS, RAW_NOTIFICATIONS, SECRET, Json, Pipeline, shaped, valid_notification
from support.hypothesis_profile import suppressing
from support.waiting import wait_for


@pytest.fixture
def pipeline(tmp_path: Path) -> Iterator[Pipeline]:
    writer = SpoolWriter(tmp_path / "spool")
    limits = ReceiverLimits()
    with (
        BackgroundServer(**ConnectionGuard(limits).uvicorn_settings(Receiver(writer, [SECRET], limits))) as server,
        httpx.Client(timeout=10) as http,
    ):
        yield Pipeline(server.url, writer.spool, tmp_path / "w", http)
    writer.close()


@pytest.mark.slow
def test_every_odd_shape_is_acknowledged_and_loaded_and_the_log_goes_on(pipeline: Pipeline) -> None:
    bodies = {**{name: shaped(name, f"n-{n}") for n, name in enumerate(CORPUS)}, **RAW_NOTIFICATIONS}
    for name, body in bodies.items():
        assert pipeline.deliver(body) == 200, name
    report = pipeline.load()
    assert (report.loaded, report.dead_letters) == (len(bodies), 0)  # a member of an unexpected type reads as absent
    for name, body in bodies.items():
        assert pipeline.accounted(body) == "loaded", name
    assert pipeline.query("SELECT count(*) FROM webhook_events WHERE created_at IS NULL") == [(8 + len(RAW_NOTIFICATIONS),)]
    # The next valid delivery is loaded, and a newer odd one refreshes the row with NULL for what does not fit.
    assert pipeline.deliver(orjson.dumps(valid_notification("after-the-corpus", "2026-06-01T00:00:00Z"))) == 200
    assert pipeline.load().loaded == 1
    assert pipeline.query("SELECT is_retrying, retry_count FROM tracking_requests WHERE id = 'tr-1'") == [(False, 0)]
    perhaps = valid_notification("perhaps-later", "2026-07-01T00:00:00Z")
    CORPUS["tracking request is_retrying perhaps"](perhaps)
    assert pipeline.deliver(orjson.dumps(perhaps)) == 200
    assert pipeline.load().loaded == 1
    assert pipeline.query("SELECT is_retrying, retry_count, last_event_id FROM tracking_requests WHERE id = 'tr-1'") == [
        (None, 0, "perhaps-later")
    ]
    kept = "SELECT payload->>'$.included[0].attributes.is_retrying' FROM webhook_events WHERE notification_id = 'perhaps-later'"
    assert pipeline.query(kept) == [("perhaps",)]  # the body is whole in the event log


@pytest.mark.slow
def test_signed_bodies_that_are_not_notifications_are_400_and_never_reach_the_spool(pipeline: Pipeline) -> None:
    for name, body in NOT_NOTIFICATIONS.items():
        assert pipeline.deliver(body) == 400, name
    assert len(list((pipeline.spool / "quarantine").glob("*.bin"))) == len(NOT_NOTIFICATIONS)
    assert pipeline.deliver(orjson.dumps(valid_notification("after-the-refusals"))) == 200
    assert (pipeline.load().loaded, pipeline.query("SELECT count(*) FROM webhook_events")) == (1, [(1,)])


def test_forged_lines_and_escapes_stay_inside_their_delivery_line(pipeline: Pipeline, caplog: pytest.LogCaptureFixture) -> None:
    names = ("event with a forged log line", "event with terminal escapes", "a notification id with a newline")
    with caplog.at_level(logging.INFO, logger="shipsync.webhooks"):
        for n, name in enumerate(names):
            assert pipeline.deliver(shaped(name, f"id-{n}")) == 200
        wait_for(lambda: "n-forged" in caplog.text, "the delivery log lines", every_s=0.02)
    lines = [line for record in caplog.records for line in record.getMessage().split("\n")]
    assert len(lines) == len(names) and all(line.startswith("delivery event=") for line in lines), lines
    assert not any(character in caplog.text for character in "\x1b\x07\r")
    assert "\\x1b[2J" in caplog.text and "id=n-forged\\n2026" in caplog.text


# The property ------------------------------------------------------------------------------------

_scalars = (
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12)
)
any_json = st.recursive(
    _scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=8
)
_times = st.sampled_from(
    ["2026-05-11T18:30:00Z", "2026-05-11", "2026-05-11T18:30:00+05:30", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z"]
)
_ids = st.text(min_size=1, max_size=8) | st.sampled_from(["c-1", "s-1", "tr-1"])


def maybe(plausible: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Mostly the plausible value, sometimes any JSON at all, sometimes absent (see `members`)."""
    return st.one_of(plausible, plausible, any_json)


def members(**fields: st.SearchStrategy[Any]) -> st.SearchStrategy[Json]:
    """An object with any subset of `fields`."""
    return st.fixed_dictionaries({}, optional=fields)


def _attribute_names() -> list[str]:
    typed = sorted({str(name) for name in sql_types("tracking_requests")} - {"id", "_synced_at", "_run_id"})  # plain str: orjson's keys
    return [*typed, "number", "bill_of_lading_number", "pod_arrived_at", "weight_in_lbs"]


_linkage = members(data=maybe(members(id=maybe(_ids), type=maybe(st.sampled_from(["shipment", "container", "webhook"])))))
_resource = members(
    id=maybe(_ids),
    type=maybe(st.sampled_from(["tracking_request", "shipment", "container", "transport_event", "port"])),
    attributes=maybe(st.dictionaries(st.sampled_from(_attribute_names()), maybe(_times | _scalars), max_size=5)),
    relationships=maybe(st.dictionaries(st.sampled_from(["tracked_object", "customer", "shipment"]), maybe(_linkage), max_size=2)),
    links=maybe(members(self=maybe(st.text(max_size=10)))),
)
notifications = st.fixed_dictionaries(
    {
        "data": st.fixed_dictionaries(
            {"type": st.just("webhook_notification")},
            optional={
                "attributes": maybe(
                    members(
                        event=maybe(st.sampled_from(["container.updated", "tracking_request.succeeded"])),
                        created_at=maybe(_times),
                        delivery_status=maybe(st.just("pending")),
                    )
                ),
                "relationships": maybe(st.dictionaries(st.sampled_from(["webhook", "reference_object"]), maybe(_linkage), max_size=2)),
            },
        )
    },
    optional={"included": maybe(st.lists(maybe(_resource), max_size=4))},
)
# Any signed JSON: mostly notifications with odd members, sometimes any JSON value at all.
signed_json = st.one_of(notifications, notifications, notifications, any_json)


@pytest.mark.slow
def test_property_a_signed_json_body_is_400_or_200_and_every_200_is_loaded_or_dead_lettered(pipeline: Pipeline) -> None:
    serial = itertools.count()

    @settings(max_examples=40, suppress_health_check=suppressing(HealthCheck.data_too_large))
    @given(st.lists(signed_json, min_size=1, max_size=3), st.booleans())
    def check(documents: list[Any], keep_their_ids: bool) -> None:
        acknowledged = []
        for document in documents:
            if isinstance(document, dict) and isinstance(document.get("data"), dict) and not keep_their_ids:
                document = copy.deepcopy(document)
                document["data"]["id"] = f"p-{next(serial)}"  # else ids are drawn, and repeats are conflicts
            body = orjson.dumps(document)
            status = pipeline.deliver(body)
            assert status in (200, 400), (status, body)
            if status == 200:
                acknowledged.append(body)
        valid = orjson.dumps(valid_notification(f"valid-{next(serial)}"))
        assert pipeline.deliver(valid) == 200
        pipeline.load()
        for body in acknowledged:
            assert pipeline.accounted(body) is not None, body
        assert pipeline.accounted(valid) == "loaded"

    check()
