"""Hostile webhook deliveries for the tests: a corpus of odd-shaped signed bodies (issue 19's
classes), and a receiver-to-warehouse pipeline that tells where each delivered body ended."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import orjson

from shipsync.webhooks.load import LoadReport, load_events
from shipsync.webhooks.signature import sign
from shipsync_sandbox.deliver import envelope
from support.lake import analyst, location

SECRET = "whsec-hostile-corpus-01"
Json = dict[str, Any]


def valid_notification(notification_id: str, created_at: str = "2026-05-11T18:30:00Z") -> Json:
    """A notification as the service sends it, with one included resource of each entity type."""
    event = {"id": "te-1", "type": "transport_event", "attributes": {"event": "container.transport.vessel_arrived"}}
    included = [
        {
            "id": "tr-1",
            "type": "tracking_request",
            "attributes": {"request_number": "MEDUFR030802", "status": "created", "is_retrying": False, "retry_count": 0},
            "relationships": {"tracked_object": {"data": {"id": "s-1", "type": "shipment"}}},
        },
        {"id": "s-1", "type": "shipment", "attributes": {"bill_of_lading_number": "MEDUFR030802", "tags": ["hot"]}},
        {"id": "c-1", "type": "container", "attributes": {"number": "MSCU1234566", "pod_arrived_at": "2026-05-11T18:00:00Z"}},
        event,
    ]
    return envelope("w-1", "container.transport.vessel_arrived", event, included, created_at, notification_id)


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
    # Read one way by orjson (the last), another by DuckDB (the first): refused (issue 27, item 12).
    "a member given twice": b'{"data": {"id": "twice", "type": "webhook_notification", "attributes": {"event": "a", "event": 1}}}',
    "nested 260 deep": b'{"data": {"id": "deep", "type": "webhook_notification"}, "x": ' + b"[" * 259 + b"]" * 259 + b"}",
}


# Notifications only raw bytes can spell: 200, and loaded like any other.
_RAW_DATA = b'"type": "webhook_notification"'
RAW_NOTIFICATIONS: dict[str, bytes] = {
    "an integer beyond 64 bits": b'{"data": {"id": "raw-big", %s, "attributes": {"created_at": 123456789012345678901234567890}}}'
    % _RAW_DATA,
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
        return load_events(location(self.warehouse), self.spool)

    def query(self, sql: str, parameters: list[Any] | None = None) -> list[tuple[Any, ...]]:
        con = analyst(self.warehouse)
        try:
            return con.execute(sql, parameters).fetchall()
        finally:
            con.close()

    def accounted(self, body: bytes) -> str | None:
        """Where a delivered body ended: loaded, a conflict, or a dead letter (None: nowhere)."""
        notification_id = orjson.loads(body)["data"]["id"]
        # Compared here, not in a WHERE: DuckLake 1.5.5 puts a filter's constant into the SQL it sends
        # its catalog for file pruning, and a NUL in it (one hostile id has one) cuts that SQL short.
        for table, sql in (
            ("loaded", "SELECT notification_id FROM webhook_events"),
            ("conflict", "SELECT notification_id FROM webhook_event_conflicts"),
        ):
            if notification_id in {row[0] for row in self.query(sql)}:
                return table
        return "dead letter" if body in {row[0] for row in self.query("SELECT body FROM webhook_dead_letters")} else None
