"""Hostile deliveries, end to end: signed bodies of every odd shape go through the receiver over
HTTP and then `events load`. A 200 is always loaded or dead-lettered, never a stop: the next valid
delivery is always loaded (issue 19, items 1 and 10, and its hypothesis property)."""

from __future__ import annotations

import copy
import itertools
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import httpx
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shipsync.serving import BackgroundServer
from shipsync.warehouse.upsert import sql_types
from shipsync.webhooks.http_limits import limited_protocol
from shipsync.webhooks.limits import ReceiverLimits
from shipsync.webhooks.load import LoadReport, load_events
from shipsync.webhooks.receiver import Receiver
from shipsync.webhooks.signature import sign
from shipsync.webhooks.writer import SpoolWriter

SECRET = "whsec-hostile-corpus-01"
Json = dict[str, Any]


def valid_notification(notification_id: str, created_at: str = "2026-05-11T18:30:00Z") -> Json:
    """A notification as the service sends it, with one included resource of each entity type."""
    return {
        "data": {
            "id": notification_id,
            "type": "webhook_notification",
            "attributes": {
                "id": notification_id,
                "event": "container.transport.vessel_arrived",
                "delivery_status": "pending",
                "created_at": created_at,
            },
            "relationships": {
                "webhook": {"data": {"id": "w-1", "type": "webhook"}},
                "reference_object": {"data": {"id": "te-1", "type": "transport_event"}},
            },
        },
        "included": [
            {
                "id": "tr-1",
                "type": "tracking_request",
                "attributes": {"request_number": "MEDUFR030802", "status": "created", "is_retrying": False, "retry_count": 0},
                "relationships": {"tracked_object": {"data": {"id": "s-1", "type": "shipment"}}},
            },
            {"id": "s-1", "type": "shipment", "attributes": {"bill_of_lading_number": "MEDUFR030802", "tags": ["hot"]}},
            {"id": "c-1", "type": "container", "attributes": {"number": "MSCU1234566", "pod_arrived_at": "2026-05-11T18:00:00Z"}},
            {"id": "te-1", "type": "transport_event", "attributes": {"event": "container.transport.vessel_arrived"}},
        ],
    }


def changed(path: str, value: Any) -> Callable[[Json], None]:
    """Set the member at `path` (dots; a number picks an item of a list) to `value`."""

    def change(document: Json) -> None:
        *parents, last = path.split(".")
        target: Any = document
        for step in parents:
            target = target[int(step)] if isinstance(target, list) else target[step]
        target[int(last) if isinstance(target, list) else last] = value

    return change


def nested(depth: int) -> Any:
    """`depth` lists inside each other (deeper than the parser's 1024 levels is NOT_NOTIFICATIONS')."""
    value: Any = {}
    for _ in range(depth):
        value = [value]
    return value


# Shapes a signed body may have: the 20 of issue 19 (13 of which used to stop the event log for good),
# the forged log lines of item 10, and more of the same classes.
CORPUS: dict[str, Callable[[Json], None]] = {
    "attributes a list": changed("data.attributes", ["event", "x"]),
    "attributes null": changed("data.attributes", None),
    "attributes a string": changed("data.attributes", "container.updated"),
    "created_at not a time": changed("data.attributes.created_at", "yesterday, around noon"),
    "created_at a number": changed("data.attributes.created_at", 1778524200),
    "created_at out of range": changed("data.attributes.created_at", "99999-01-01T00:00:00Z"),
    "created_at an impossible date": changed("data.attributes.created_at", "2026-13-45T99:00:00Z"),
    "created_at an object": changed("data.attributes.created_at", {"at": "2026-05-11"}),
    "event an object": changed("data.attributes.event", {"kind": "container.updated"}),
    "event a number": changed("data.attributes.event", 42),
    "event with a forged log line": changed(
        "data.attributes.event", "x -> 200 stored (0.1 ms)\n2026-01-01 00:00:00,000 delivery event=forged"
    ),
    "event with terminal escapes": changed("data.attributes.event", "\x1b[2J\x1b[31mred\x07\r"),
    "delivery_status a list": changed("data.attributes.delivery_status", ["pending"]),
    "included a number": changed("included", 7),
    "included an object": changed("included", {"id": "c-1", "type": "container"}),
    "included items not resources": changed("included", [1, "container", None, [], {"type": 5}, {"id": {"x": 1}, "type": "container"}]),
    "a relationship a list": changed("data.relationships.webhook", [{"data": {"id": "w-1", "type": "webhook"}}]),
    "relationships a string": changed("data.relationships", "webhook"),
    "a linkage id an object": changed("data.relationships.reference_object.data.id", {"id": "te-1"}),
    "a linkage id a number": changed("data.relationships.webhook.data.id", 12345),
    "tracking request is_retrying perhaps": changed("included.0.attributes.is_retrying", "perhaps"),
    "tracking request retry_count a string": changed("included.0.attributes.retry_count", "many"),
    "tracking request retry_count beyond 64 bits": changed("included.0.attributes.retry_count", 2**63),
    "tracking request tags a string": changed("included.0.attributes.tags", "hot"),
    "tracking request created_at a list": changed("included.0.attributes.created_at", ["2026-05-11"]),
    "tracking request attributes a list": changed("included.0.attributes", [1, 2]),
    "tracking request relationships a list": changed("included.0.relationships", [{"data": None}]),
    "tracking request tracked_object a list": changed("included.0.relationships.tracked_object", [1]),
    "shipment attributes a number": changed("included.1.attributes", 3.5),
    "shipment links a string": changed("included.1.links", "https://example.com"),
    "container id a number": changed("included.2.id", 31337),
    "container id empty": changed("included.2.id", ""),
    "container with a NUL in a value": changed("included.2.attributes.number", "MSCU\u00001234566"),
    "container with deep attributes": changed("included.2.attributes.nested", nested(200)),
    "a notification id with a newline": changed("data.id", "n-forged\n2026-01-01 00:00:00,000 delivery event=forged"),
    "a notification id of 10,000 characters": changed("data.id", "n" * 10_000),
    "unicode everywhere": changed("data.attributes.event", "контейнер.прибыл 🚢 \u202e\u2066"),
    "unknown members everywhere": changed("data.surprise", {"nested": [1, {"deeper": None}]}),
    "float extremes": changed("included.2.attributes.weight_in_lbs", 1.7976931348623157e308),
}


# Signed bodies that are not notifications at all: 400, kept in quarantine, never in the spool.
NOT_NOTIFICATIONS: dict[str, bytes] = {
    "not JSON": b"<html>502</html>",
    "JSON null": b"null",
    "a list": b"[]",
    "data a list": b'{"data": []}',
    "no id": b'{"data": {"type": "webhook_notification"}}',
    "an empty id": b'{"data": {"id": "", "type": "webhook_notification"}}',
    "an id that is a number": b'{"data": {"id": 5, "type": "webhook_notification"}}',
    "another type": b'{"data": {"id": "x", "type": "container"}}',
    "nested 5,000 deep": b'{"data": ' + b"[" * 5000 + b"]" * 5000 + b"}",
    "a lone surrogate": b'{"data": {"id": "\\ud800", "type": "webhook_notification"}}',
    "invalid UTF-8": b'{"data": {"id": "\xff\xfe", "type": "webhook_notification"}}',
}


# Notifications only raw bytes can spell: 200, and loaded like any other.
_RAW_DATA = b'"type": "webhook_notification"'
RAW_NOTIFICATIONS: dict[str, bytes] = {
    "an integer beyond 64 bits": b'{"data": {"id": "raw-big", %s, "attributes": {"created_at": 123456789012345678901234567890}}}'
    % _RAW_DATA,
    "a member given twice": b'{"data": {"id": "raw-twice", %s, "attributes": {"event": "a", "event": {"b": 1}}}}' % _RAW_DATA,
    "a NUL escape in the id": b'{"data": {"id": "raw-\\u0000-nul", %s}, "included": [{"id": "\\u0000", "type": "container"}]}' % _RAW_DATA,
    "spacing and CRLF": b'{\r\n  "data" : {"id":"raw-crlf","type":"webhook_notification"}\r\n}',
}


def shaped(name: str, notification_id: str) -> bytes:
    document = valid_notification(notification_id)
    CORPUS[name](document)
    return orjson.dumps(document)


@dataclass
class Pipeline:
    """A receiver on a loopback port, its spool, and the warehouse `events load` fills."""

    url: str
    spool: Path
    warehouse: Path
    http: httpx.Client

    def deliver(self, body: bytes) -> int:
        return self.http.post(f"{self.url}/webhook", content=body, headers={"X-T49-Webhook-Signature": sign(SECRET, body)}).status_code

    def load(self) -> LoadReport:
        return load_events(self.warehouse, self.spool)

    def query(self, sql: str, parameters: list[Any] | None = None) -> list[tuple[Any, ...]]:
        con = duckdb.connect(str(self.warehouse), read_only=True)
        try:
            return con.execute(sql, parameters).fetchall()
        finally:
            con.close()

    def accounted(self, body: bytes) -> str | None:
        """Where a delivered body ended: loaded, a conflict, or a dead letter (None: nowhere)."""
        notification_id = orjson.loads(body)["data"]["id"]
        for table, sql in (
            ("loaded", "SELECT count(*) FROM webhook_events WHERE notification_id = ?"),
            ("conflict", "SELECT count(*) FROM webhook_event_conflicts WHERE notification_id = ?"),
        ):
            if self.query(sql, [notification_id])[0][0]:
                return table
        return "dead letter" if self.query("SELECT count(*) FROM webhook_dead_letters WHERE body = ?", [body])[0][0] else None


@pytest.fixture
def pipeline(tmp_path: Path) -> Iterator[Pipeline]:
    writer = SpoolWriter(tmp_path / "spool")
    limits = ReceiverLimits()
    with BackgroundServer(Receiver(writer, [SECRET], limits), http=limited_protocol(limits)) as server, httpx.Client(timeout=10) as http:
        yield Pipeline(server.url, writer.spool, tmp_path / "w.duckdb", http)
    writer.close()


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
        deadline = time.monotonic() + 5
        while "n-forged" not in caplog.text and time.monotonic() < deadline:
            time.sleep(0.02)
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
    typed = sorted(set(sql_types("tracking_requests")) - {"id", "_synced_at", "_run_id"})
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

    @settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
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
