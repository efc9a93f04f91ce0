"""The steps of loading one batch of spool records, in order: parse, dedupe, events, resources,
(entities: `load_entities`), conflicts, dead letters, checkpoint. Each step is one function over
the batch; `load` runs them in one transaction.

Parsing refuses, as dead letters, what the receiver refuses (a body too deep, with too many values
or a member given twice: `body_limits`) and stamps outside a sane window (`stamp_problem`), so
that every step after it can write what it reads. It keeps what the later steps need and lets the parsed document go, so a batch holds its
bodies and their rows, never every parsed body at once (a 1 MiB body of `{}`s parses into ~37 MB
of Python objects).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import duckdb
import orjson
import pyarrow as pa

from shipsync.json_text import dumps
from shipsync.warehouse.declared_tables import DECLARED_BY_TYPE
from shipsync.warehouse.upsert import staged
from shipsync.webhooks.framing import SpoolRecord
from shipsync.webhooks.notification import JsonObject, parse_notification, stamp_problem

# Included resources that refresh a table: tracking requests, every declared type (shipments,
# containers, events, places), and the changesets of `container.updated`.
ENTITY_TYPES = frozenset({"tracking_request", "container_updated_event", *DECLARED_BY_TYPE})
REASON_CHARACTERS = 500


@dataclass(slots=True)
class Parsed:
    """A notification from the spool, as its rows: the event, its included resources, and the
    resources that may refresh an entity table."""

    record: SpoolRecord
    notification_id: str
    event: str | None
    delivery_status: str | None
    created_at: str | None  # UTC ISO, or None when absent or not a time
    webhook_id: str | None
    reference_type: str | None
    reference_id: str | None
    resources: list[tuple[str, str, str | None, str | None]] = field(default_factory=list)  # type, id, attributes, relationships
    entities: list[tuple[str, str, JsonObject]] = field(default_factory=list)  # type, id, resource


@dataclass(frozen=True, slots=True)
class DeadLetter:
    record: SpoolRecord
    reason: str
    notification_id: str | None = None


def parse_records(records: Sequence[SpoolRecord], now: datetime) -> tuple[list[Parsed], list[DeadLetter]]:
    """Each record as its rows, or as a dead letter with the reason it is not a notification (the
    receiver's reasons: `parse_notification`) or cannot be trusted (`stamp_problem`)."""
    parsed: list[Parsed] = []
    dead: list[DeadLetter] = []
    for record in records:
        notification = parse_notification(record.body)
        if isinstance(notification, str):
            dead.append(DeadLetter(record, notification))
            continue
        if problem := stamp_problem(notification, now):
            dead.append(DeadLetter(record, problem, notification.id))
            continue
        webhook = notification.related("webhook")
        reference_type, reference_id = notification.related("reference_object")
        row = Parsed(
            record,
            notification.id,
            notification.event,
            notification.delivery_status,
            notification.created_at,
            webhook[1],
            reference_type,
            reference_id,
        )
        for (type_, id_), resource in notification.included().items():
            row.resources.append((type_, id_, dumps(resource.get("attributes") or {}), dumps(resource.get("relationships") or {})))
            if type_ in ENTITY_TYPES:
                row.entities.append((type_, id_, resource))
        parsed.append(row)
    return parsed, dead


def same_body(first: bytes, second: bytes) -> bool:
    """The same bytes, or the same canonical JSON (sorted keys, no spacing). Never Python equality,
    for which `true`, `1` and `1.0` are equal: as JSON they are three different bodies."""
    if first == second:
        return True
    try:
        return _canonical(first) == _canonical(second)
    except orjson.JSONDecodeError:
        return False


def _canonical(body: bytes) -> bytes:
    return orjson.dumps(orjson.loads(body), option=orjson.OPT_SORT_KEYS)


def _loaded_bodies(con: duckdb.DuckDBPyConnection, ids: Sequence[str]) -> dict[str, bytes]:
    if not ids:
        return {}
    with staged(con, "_ids", pa.table({"id": pa.array(list(ids), pa.string())})):
        rows = con.execute("SELECT notification_id, payload FROM webhook_events WHERE notification_id IN (SELECT id FROM _ids)").fetchall()
    return {notification_id: payload.encode() for notification_id, payload in rows}


def dedupe(con: duckdb.DuckDBPyConnection, parsed: list[Parsed]) -> tuple[list[Parsed], list[Parsed], list[Parsed]]:
    """(new notifications, those that repeat a known body, those that bring a different body)."""
    known = _loaded_bodies(con, [p.notification_id for p in parsed])
    fresh: list[Parsed] = []
    conflicts: list[Parsed] = []
    repeats: list[Parsed] = []
    for p in parsed:
        previous = known.get(p.notification_id)
        if previous is None:
            fresh.append(p)
            known[p.notification_id] = p.record.body
        elif same_body(previous, p.record.body):
            repeats.append(p)
        else:
            conflicts.append(p)
    return fresh, repeats, conflicts


def _insert(con: duckdb.DuckDBPyConnection, name: str, columns: dict[str, Any], sql: str, parameters: list[Any] | None = None) -> None:
    """Stage `columns` as the view `name` and run `sql` over it."""
    with staged(con, name, pa.table(columns)):
        con.execute(sql, parameters)


def insert_events(con: duckdb.DuckDBPyConnection, fresh: list[Parsed], now: datetime) -> None:
    if not fresh:
        return
    columns = {
        "notification_id": [p.notification_id for p in fresh],
        "event": [p.event for p in fresh],
        "delivery_status": [p.delivery_status for p in fresh],
        "created_at": [p.created_at for p in fresh],
        "webhook_id": [p.webhook_id for p in fresh],
        "reference_type": [p.reference_type for p in fresh],
        "reference_id": [p.reference_id for p in fresh],
        "received_at": [p.record.received_at for p in fresh],
        # The body as delivered is the payload: the service's retries resend the same bytes.
        "payload": pa.array([p.record.body for p in fresh], pa.binary()).cast(pa.string()),
    }
    sql = (
        "INSERT INTO webhook_events SELECT notification_id, event, delivery_status, CAST(created_at AS TIMESTAMPTZ), webhook_id, "
        "reference_type, reference_id, CAST(received_at AS TIMESTAMPTZ), CAST(payload AS JSON), ? FROM _events"
    )
    _insert(con, "_events", columns, sql, [now])


def insert_resources(con: duckdb.DuckDBPyConnection, fresh: list[Parsed]) -> None:
    rows = [(p.notification_id, *resource) for p in fresh for resource in p.resources]
    if not rows:
        return
    names = ("notification_id", "type", "id", "attributes", "relationships")
    columns = {name: [row[n] for row in rows] for n, name in enumerate(names)}
    sql = (
        "INSERT INTO webhook_event_resources SELECT notification_id, type, id, CAST(attributes AS JSON), "
        "CAST(relationships AS JSON) FROM _resources"
    )
    _insert(con, "_resources", columns, sql)


def insert_conflicts(con: duckdb.DuckDBPyConnection, conflicts: list[Parsed], now: datetime) -> None:
    for p in conflicts:
        con.execute(
            "INSERT INTO webhook_event_conflicts VALUES (?, CAST(? AS TIMESTAMPTZ), CAST(? AS JSON), ?)",
            [p.notification_id, p.record.received_at, p.record.body.decode(), now],
        )


def insert_redeliveries(con: duckdb.DuckDBPyConnection, repeats: list[Parsed], now: datetime) -> None:
    """One row per notification delivered again, at most: when it first came again. A row per copy
    let one captured delivery replayed 300 times make 299 rows; how many copies came is the run's
    `duplicates` count. (A row holding a count and the last time, updated in place, needs the
    table to change: the warehouse's to decide.)"""
    if not repeats:
        return
    columns = {"notification_id": [p.notification_id for p in repeats], "received_at": [p.record.received_at for p in repeats]}
    sql = (
        "INSERT INTO webhook_redeliveries SELECT r.notification_id, min(CAST(r.received_at AS TIMESTAMPTZ)), ? FROM _repeats r "
        "WHERE NOT EXISTS (SELECT 1 FROM webhook_redeliveries k WHERE k.notification_id = r.notification_id) GROUP BY r.notification_id"
    )
    _insert(con, "_repeats", columns, sql, [now])


def insert_dead_letters(con: duckdb.DuckDBPyConnection, dead: list[DeadLetter], now: datetime) -> None:
    if not dead:
        return
    columns = {
        "segment": [d.record.segment for d in dead],
        "end_offset": [d.record.end_offset for d in dead],
        "notification_id": [d.notification_id for d in dead],
        "received_at": [d.record.received_at for d in dead],
        "reason": [d.reason[:REASON_CHARACTERS] for d in dead],
        "body": pa.array([d.record.body for d in dead], pa.binary()),
    }
    sql = (
        "INSERT INTO webhook_dead_letters SELECT segment, end_offset, notification_id, CAST(received_at AS TIMESTAMPTZ), "
        "reason, body, ? FROM _dead"
    )
    _insert(con, "_dead", columns, sql, [now])


def save_checkpoints(con: duckdb.DuckDBPyConnection, progress: dict[str, int], now: datetime) -> None:
    for segment, offset in progress.items():
        con.execute("DELETE FROM webhook_spool_checkpoints WHERE segment = ?", [segment])
        con.execute("INSERT INTO webhook_spool_checkpoints VALUES (?, ?, false, ?)", [segment, offset, now])
