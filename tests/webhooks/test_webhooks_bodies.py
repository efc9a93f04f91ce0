"""Bodies no step can stop on (issue 27, items 3, 7 and 12): a body too deep or with too many values
(counted before it is parsed), a member given twice and a freshness stamp outside 1970 to two years
ahead are refused alike by the receiver (400, quarantined) and by `events load` (a dead letter); and
no generated payload makes `events load` raise or leaves a record neither loaded nor dead-lettered."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from shipsync.cli import app
from shipsync.webhooks.body_limits import MAX_DEPTH, MAX_VALUES, members_of, shape_of
from shipsync.webhooks.framing import encode_record, read_records
from shipsync.webhooks.http_limits import ConnectionGuard
from shipsync.webhooks.limits import ReceiverLimits
from shipsync.webhooks.load import load_events
from shipsync.webhooks.receiver import Receiver
from shipsync.webhooks.signature import sign
from shipsync.webhooks.spool import SPOOL_ID_FILE
from shipsync.webhooks.writer import SpoolWriter
from shipsync_sandbox.serving import BackgroundServer
from support.http import HTTP
from support.hypothesis_profile import suppressing
from support.lake import analyst, location
from support.warehouse_rows import container_updated, load_deliveries, rows, write_container

SECRET = "whsec-bodies-test-0001"


def values_of(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + sum(map(values_of, value.values()))
    if isinstance(value, list):
        return 1 + sum(map(values_of, value))
    return 1


def depth_of(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max(map(depth_of, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(depth_of, value), default=0)
    return 0


# Strings of any characters: quotes, backslashes and brackets inside them must not count.
_tricky_text = st.text(alphabet=st.sampled_from('"\\[]{},:ab\n\u00e9'), max_size=8) | st.text(max_size=8)
any_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False, allow_infinity=False) | _tricky_text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_tricky_text, inner, max_size=4),
    max_leaves=30,
)


@given(any_json, st.booleans())
def test_the_shape_read_off_the_bytes_is_the_parsed_documents(value: Any, indented: bool) -> None:
    body = orjson.dumps(value, option=orjson.OPT_INDENT_2 if indented else 0)
    shape = shape_of(body)
    assert (shape.depth, shape.values, shape.members) == (depth_of(value), values_of(value), members_of(value))


def notification(notification_id: str, included: Any = (), **attributes: Any) -> bytes:
    data = {"id": notification_id, "type": "webhook_notification", "attributes": {"event": "container.updated", **attributes}}
    return orjson.dumps({"data": data, "included": list(included)})


def nested_in_a_resource(depth: int) -> bytes:
    """A container whose attribute nests lists `depth` deep (the body: depth + 4 levels)."""
    head = (
        b'{"data": {"id": "deep-%d", "type": "webhook_notification"}, "included": [{"id": "c-d", "type": "container", "attributes": {"x": '
    )
    return head % depth + b"[" * depth + b"]" * depth + b"}}]}"


REFUSED = {
    # orjson reads it, then cannot write it again: it stopped `events load` for good.
    "nested 260 deep": (nested_in_a_resource(256), "nested 260 levels deep"),
    "a member given twice": (
        b'{"data": {"id": "twice", "type": "webhook_notification", "attributes": {"event": "a", "event": "b"}}}',
        "given twice",
    ),
    "an id given twice": (b'{"data": {"id": "one", "type": "webhook_notification", "id": "two"}}', "given twice"),
    "too many values": (b'{"data": {"id": "wide", "type": "webhook_notification"}, "x": [' + b"0," * MAX_VALUES + b"0]}", "values"),
}


@pytest.fixture
def receiver(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    writer = SpoolWriter(tmp_path / "spool")
    limits = ReceiverLimits()
    with BackgroundServer(**ConnectionGuard(limits).uvicorn_settings(Receiver(writer, [SECRET], limits))) as server:
        yield server.url, writer.spool
    writer.close()


@pytest.mark.parametrize("name", REFUSED)
def test_the_receiver_refuses_what_the_loader_dead_letters_for_the_same_reason(receiver: tuple[str, Path], name: str) -> None:
    url, spool = receiver
    body, reason = REFUSED[name]
    response = HTTP.post(f"{url}/webhook", content=body, headers={"X-T49-Webhook-Signature": sign(SECRET, body)})
    assert response.status_code == 400 and reason in response.text, response.text
    assert [p.read_bytes() for p in (spool / "quarantine").glob("*.bin")] == [body]
    # The same body in the spool (an older receiver's, or planted): a dead letter, and the load goes on.
    load_deliveries(spool.parent / "w", [notification("before"), body, notification("after")])
    dead = rows(spool.parent / "w", "SELECT reason, body FROM webhook_dead_letters")
    assert [(reason in d["reason"], d["body"]) for d in dead] == [(True, body)], dead
    assert rows(spool.parent / "w", "SELECT notification_id FROM webhook_events ORDER BY 1") == [
        {"notification_id": "after"},
        {"notification_id": "before"},
    ]


def test_a_body_nested_260_deep_no_longer_stops_events_load(tmp_path: Path) -> None:
    """The probe's 679-byte delivery: a dead letter, and `events load` exits 0 with the rest loaded."""
    spool, warehouse = tmp_path / "spool", tmp_path / "w"
    spool.mkdir(mode=0o700)
    deep = nested_in_a_resource(256)
    (spool / "segment-00000000000000000001-1.spool").write_bytes(
        b"".join(encode_record(b, 0) for b in [notification("n-1"), deep, notification("n-2")])
    )
    env = {"SHIPSYNC_WAREHOUSE": str(warehouse), "SHIPSYNC_SPOOL": str(spool), "COLUMNS": "300"}
    result = CliRunner().invoke(app, ["events", "load"], env=env)
    assert result.exit_code == 0, result.output
    assert "2 loaded" in result.output and "1 dead-lettered" in result.output
    assert rows(warehouse, "SELECT reason FROM webhook_dead_letters") == [{"reason": f"body nested 260 levels deep (at most {MAX_DEPTH})"}]
    assert CliRunner().invoke(app, ["events", "load"], env=env).exit_code == 0


def test_a_body_at_the_depth_limit_loads_and_is_written_again(tmp_path: Path) -> None:
    warehouse = tmp_path / "w"
    load_deliveries(warehouse, [nested_in_a_resource(MAX_DEPTH - 4)])
    assert rows(warehouse, "SELECT count(*) AS n FROM webhook_events") == [{"n": 1}]
    assert rows(warehouse, "SELECT count(*) AS n FROM webhook_event_resources") == [{"n": 1}]


@pytest.mark.slow
def test_a_stamp_outside_the_window_is_a_dead_letter_and_freezes_nothing(warehouse: Path) -> None:
    """A changeset at `infinity` (or a notification of the year 9999) used to become the container's
    freshness stamp: every later update was "older" and the container was frozen for good."""
    write_container(warehouse, {"id": "c-1", "type": "container", "attributes": {"number": "MSKU1234565"}}, "2026-05-20T10:00:00Z")
    far_ahead = notification(
        "n-9999",
        [{"id": "c-1", "type": "container", "attributes": {"number": "MSKU1234565", "pickup_lfd": "2026-06-01"}}],
        created_at="9999-12-31T23:59:59Z",
    )
    load_deliveries(
        warehouse,
        [
            container_updated("c-1", "infinity", {"available_for_pickup": [None, False]}, "n-infinity"),
            far_ahead,
            container_updated("c-1", "1969-07-20T20:17:00Z", {"available_for_pickup": [None, False]}, "n-1969"),
            container_updated("c-1", "2026-05-22T10:00:00Z", {"available_for_pickup": [None, True]}, "n-later"),
        ],
    )
    dead = {r["notification_id"]: r["reason"] for r in rows(warehouse, "SELECT notification_id, reason FROM webhook_dead_letters")}
    assert sorted(dead) == ["n-1969", "n-9999", "n-infinity"]
    assert dead["n-infinity"].startswith("changeset timestamp 'infinity' is not a time between 1970 and ")
    assert dead["n-9999"].startswith("created_at '9999-12-31T23:59:59Z' is not a time between 1970 and ")
    (row,) = rows(warehouse, "SELECT available_for_pickup, pickup_lfd, observed_at, last_event_id FROM containers")
    assert row["available_for_pickup"] is True and row["pickup_lfd"] is None and row["last_event_id"] == "n-later"
    assert row["observed_at"].isoformat() == "2026-05-22T10:00:00+00:00"


# The property ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Raw:
    """A token written as it is: an odd number, or brackets nested deeper than Python recurses."""

    text: str


@dataclass(frozen=True)
class Members:
    """An object written member by member, so a key may come twice."""

    pairs: tuple[tuple[str, Any], ...]


def raw_json(value: Any) -> bytes:
    if isinstance(value, Raw):
        return value.text.encode()
    if isinstance(value, dict):
        value = Members(tuple(value.items()))
    if isinstance(value, Members):
        return b"{" + b",".join(orjson.dumps(key) + b":" + raw_json(member) for key, member in value.pairs) + b"}"
    if isinstance(value, list):
        return b"[" + b",".join(map(raw_json, value)) + b"]"
    return orjson.dumps(value)


_odd_numbers = st.sampled_from(
    ["1e400", "-1e400", "-0", "0e0", "1E+2", "123456789012345678901234567890", "-9223372036854775809", "5e-324", "0.1e-400"]
).map(Raw)
_deep = st.sampled_from([1, 50, 200, 236, 237, 250, 256, 1100]).map(lambda depth: Raw("[" * depth + "]" * depth))
_wide = st.sampled_from([10, 5_000, MAX_VALUES - 50, MAX_VALUES + 10]).map(lambda n: Raw("[" + ",".join("0" * n) + "]"))
_huge_string = st.sampled_from([1_000, 300_000]).map(lambda n: "x" * n)
_twice = st.just(Members((("k", 1), ("k", {"k": 2}))))
_odd = st.one_of(_odd_numbers, _deep, _wide, _huge_string, _twice, st.none(), st.text(max_size=10))
_stamps = (
    st.sampled_from(
        [
            "2026-05-11T18:30:00Z",
            "2026-05-11T18:30:00+14:00",
            "2026-05-11",
            "infinity",
            "-infinity",
            "9999-12-31T23:59:59Z",
            "0001-01-01T00:00:00Z",
            "1969-12-31T23:59:59Z",
            "2100-01-01T00:00:00Z",
            "",
            "yesterday",
        ]
    )
    | _odd
)
_containers = st.sampled_from(["c-1", "c-2"])


@st.composite
def odd_notifications(draw: st.DrawFn, notification_id: str) -> bytes:
    container = draw(_containers)
    resources: list[Any] = []
    if draw(st.booleans()):
        attributes = Members((("number", "MSKU1234565"), ("pickup_lfd", draw(_stamps)), ("odd", draw(_odd))))
        resources.append({"id": container, "type": "container", "attributes": attributes})
    if draw(st.booleans()):
        changeset = {"available_for_pickup": [None, draw(_odd | st.booleans())], "pickup_lfd": [None, draw(_stamps)]}
        resources.append(
            {
                "id": f"cue-{notification_id}",
                "type": "container_updated_event",
                "attributes": {"timestamp": draw(_stamps), "changeset": changeset},
                "relationships": {"container": {"data": {"type": "container", "id": container}}},
            }
        )
    attributes = {"event": draw(st.sampled_from(["container.updated", "container.transport.vessel_arrived"])), "created_at": draw(_stamps)}
    data = Members(
        (
            ("id", notification_id),
            ("type", "webhook_notification"),
            ("attributes", attributes),
            *draw(st.sampled_from([(), (("id", "again"),)])),
        )
    )
    return raw_json({"data": data, "included": resources, "odd": draw(_odd)})


@pytest.mark.slow
def test_property_no_payload_stops_events_load_and_every_record_is_loaded_or_dead_lettered(tmp_path: Path) -> None:
    spool, warehouse = tmp_path / "spool", tmp_path / "w"
    spool.mkdir(mode=0o700)
    serial = itertools.count()

    @settings(max_examples=20, suppress_health_check=suppressing(HealthCheck.data_too_large))
    @given(st.data())
    def check(data: st.DataObject) -> None:
        batch = next(serial)
        bodies = [data.draw(odd_notifications(f"p-{batch}-{n}")) for n in range(data.draw(st.integers(1, 4)))]
        segment = spool / f"segment-{batch:020d}-1.spool"
        segment.write_bytes(b"".join(encode_record(body, 0) for body in bodies))
        report = load_events(location(warehouse), spool)  # raising here is the failure this property looks for
        assert report.loaded + report.dead_letters == len(bodies), report
        key = f"{(spool / SPOOL_ID_FILE).read_text().strip()}/{segment.name}"  # segments are keyed by their spool's id
        with analyst(warehouse) as con:
            (offset,) = con.execute('SELECT "offset" FROM webhook_spool_checkpoints WHERE segment = ?', [key]).fetchone() or (0,)
            dead = con.execute("SELECT count(*) FROM webhook_dead_letters WHERE segment = ?", [key]).fetchone()
        assert offset == list(read_records(spool / "archive" / segment.name))[-1].end_offset  # every record consumed
        assert dead == (report.dead_letters,)

    check()
    env = {"SHIPSYNC_WAREHOUSE": str(warehouse), "SHIPSYNC_SPOOL": str(spool)}
    assert CliRunner().invoke(app, ["events", "load"], env=env).exit_code == 0
