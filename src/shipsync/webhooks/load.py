"""`events load`: the spool into the event log, exactly once.

Each batch of records is written in one transaction together with the new spool checkpoint, so a
crash at any point leaves either the batch and its checkpoint or neither. A notification id seen
before is skipped (the same body) or kept as a conflict (a different body). Included tracking
requests, shipments and containers refresh their tables only when the event is newer than what the
row holds, so deliveries out of order never roll state back. Consumed segments are archived.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import orjson
import pyarrow as pa

from shipsync.api.declared import Declared
from shipsync.warehouse.changesets import apply_changesets, changesets_of
from shipsync.warehouse.connection import connect, transaction
from shipsync.warehouse.declared_rows import declared_columns
from shipsync.warehouse.declared_tables import DECLARED_BY_TYPE
from shipsync.warehouse.load import write_batch_with
from shipsync.warehouse.normalize import Batch, dumps, tracking_request_columns
from shipsync.webhooks.spool import SpoolRecord, is_finished, read_records, segments

BATCH_RECORDS = 20_000
ENTITY_TABLES = {"tracking_request": "tracking_requests"}


@dataclass
class LoadReport:
    loaded: int = 0
    duplicates: int = 0
    conflicts: int = 0
    unreadable: int = 0
    entities_refreshed: int = 0
    stale_ignored: int = 0
    changesets_applied: int = 0
    archived: list[str] = field(default_factory=list)


@dataclass
class Parsed:
    notification_id: str
    event: str | None
    created_at: str | None
    record: SpoolRecord
    document: dict[str, Any]
    canonical: str


def _parse(record: SpoolRecord) -> Parsed | None:
    try:
        document = orjson.loads(record.body)
        data = document["data"]
        notification_id = str(data["id"])
    except (ValueError, KeyError, TypeError):
        return None
    attributes = data.get("attributes") or {}
    # The body as delivered is the payload: the service's retries resend the same bytes, so there
    # is no need to re-serialize every notification just to recognise its duplicates.
    return Parsed(notification_id, attributes.get("event"), attributes.get("created_at"), record, document, record.body.decode())


def _batches(spool: Path, checkpoints: dict[str, int]) -> Iterator[tuple[list[SpoolRecord], dict[str, int]]]:
    batch: list[SpoolRecord] = []
    progress: dict[str, int] = {}
    for path in segments(spool):
        for record in read_records(path, checkpoints.get(path.name, 0)):
            batch.append(record)
            progress[path.name] = record.end_offset
            if len(batch) >= BATCH_RECORDS:
                yield batch, progress
                batch, progress = [], {}
    if batch:
        yield batch, progress


def _ref(document: dict[str, Any], name: str) -> tuple[str | None, str | None]:
    rel = ((document.get("data") or {}).get("relationships") or {}).get(name) or {}
    data = rel.get("data") if isinstance(rel, dict) else None
    if isinstance(data, dict):
        return data.get("type"), (str(data["id"]) if data.get("id") is not None else None)
    return None, None


def _existing(con: duckdb.DuckDBPyConnection, ids: Sequence[str]) -> dict[str, str]:
    if not ids:
        return {}
    con.register("_ids", pa.table({"id": pa.array(list(ids), pa.string())}))
    try:
        rows = con.execute("SELECT notification_id, payload FROM webhook_events WHERE notification_id IN (SELECT id FROM _ids)").fetchall()
    finally:
        con.unregister("_ids")
    return {r[0]: r[1] for r in rows}


def _entity_batch(con: duckdb.DuckDBPyConnection, fresh: list[Parsed], report: LoadReport) -> Batch:
    """Included resources: tracking requests where newer than the row's last event; declared types
    (shipments, containers, events, places) stamped with the notification's time, which the upsert
    compares with the row's, so older deliveries never roll a row back."""
    newest: dict[tuple[str, str], tuple[tuple[str, str], dict[str, Any]]] = {}
    for parsed in fresh:
        stamp = (parsed.created_at or "", parsed.notification_id)
        for resource in parsed.document.get("included") or []:
            if not isinstance(resource, dict) or resource.get("id") is None:
                continue
            type_ = str(resource.get("type"))
            if type_ not in ENTITY_TABLES and type_ not in DECLARED_BY_TYPE:
                continue
            key = (type_, str(resource["id"]))
            if key not in newest or newest[key][0] < stamp:
                newest[key] = (stamp, resource)
    batch: Batch = {}
    by_declaration: dict[type[Declared], list[tuple[tuple[str, str], dict[str, Any]]]] = {}
    for (type_, _), stamped in newest.items():
        if type_ in DECLARED_BY_TYPE:
            by_declaration.setdefault(DECLARED_BY_TYPE[type_], []).append(stamped)
    for declaration, found in by_declaration.items():
        batch[declaration.table_name] = declared_columns(
            declaration, [r for _, r in found], observed_at=[_utc(s[0]) or None for s, _ in found], event_ids=[s[1] for s, _ in found]
        )
        report.entities_refreshed += len(found)
    candidates = {k[1]: v for k, v in newest.items() if k[0] == "tracking_request"}
    if not candidates:
        return batch
    con.register("_ids", pa.table({"id": pa.array(list(candidates), pa.string())}))
    try:
        held = {
            row[0]: (row[1], row[2])
            for row in con.execute(
                "SELECT id, strftime(last_event_at AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%SZ'), last_event_id FROM tracking_requests "
                "WHERE id IN (SELECT id FROM _ids) AND last_event_at IS NOT NULL"
            ).fetchall()
        }
    finally:
        con.unregister("_ids")
    keep = []
    for entity_id, (stamp, resource) in candidates.items():
        current = held.get(entity_id)
        if current is not None and (current[0] or "", current[1] or "") >= (_utc(stamp[0]), stamp[1]):
            report.stale_ignored += 1
            continue
        keep.append((stamp, resource))
    if keep:
        columns = tracking_request_columns([r for _, r in keep])["tracking_requests"]
        columns["last_event_at"] = [s[0] or None for s, _ in keep]
        columns["last_event_id"] = [s[1] for s, _ in keep]
        batch["tracking_requests"] = columns
        report.entities_refreshed += len(keep)
    return batch


def _utc(stamp: str) -> str:
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        return stamp


def _write(con: duckdb.DuckDBPyConnection, records: list[SpoolRecord], progress: dict[str, int], report: LoadReport) -> None:
    parsed = [p for r in records if (p := _parse(r)) is not None]
    report.unreadable += len(records) - len(parsed)
    known = _existing(con, [p.notification_id for p in parsed])
    fresh: list[Parsed] = []
    conflicts: list[Parsed] = []
    seen: dict[str, str] = {}
    for p in parsed:
        previous = seen.get(p.notification_id, known.get(p.notification_id))
        if previous is None:
            fresh.append(p)
            seen[p.notification_id] = p.canonical
        elif previous == p.canonical or orjson.loads(previous) == p.document:
            report.duplicates += 1
        else:
            conflicts.append(p)
    now = datetime.now(UTC)
    if fresh:
        events = pa.table(
            {
                "notification_id": [p.notification_id for p in fresh],
                "event": [p.event for p in fresh],
                "delivery_status": [((p.document.get("data") or {}).get("attributes") or {}).get("delivery_status") for p in fresh],
                "created_at": [p.created_at for p in fresh],
                "webhook_id": [_ref(p.document, "webhook")[1] for p in fresh],
                "reference_type": [_ref(p.document, "reference_object")[0] for p in fresh],
                "reference_id": [_ref(p.document, "reference_object")[1] for p in fresh],
                "received_at": [p.record.received_at for p in fresh],
                "payload": [p.canonical for p in fresh],
            }
        )
        con.register("_events", events)
        con.execute(
            "INSERT INTO webhook_events SELECT notification_id, event, delivery_status, CAST(created_at AS TIMESTAMPTZ), webhook_id, "
            "reference_type, reference_id, CAST(received_at AS TIMESTAMPTZ), CAST(payload AS JSON), ? FROM _events",
            [now],
        )
        con.unregister("_events")
        resources: dict[str, list[Any]] = {"notification_id": [], "type": [], "id": [], "attributes": [], "relationships": []}
        for p in fresh:
            unique = {
                (r.get("type"), str(r.get("id"))): r
                for r in p.document.get("included") or []
                if isinstance(r, dict) and r.get("type") and r.get("id") is not None
            }
            for (type_, id_), r in unique.items():
                resources["notification_id"].append(p.notification_id)
                resources["type"].append(type_)
                resources["id"].append(id_)
                resources["attributes"].append(dumps(r.get("attributes") or {}))
                resources["relationships"].append(dumps(r.get("relationships") or {}))
        if resources["id"]:
            con.register("_resources", pa.table(resources))
            con.execute(
                "INSERT INTO webhook_event_resources SELECT notification_id, type, id, CAST(attributes AS JSON), "
                "CAST(relationships AS JSON) FROM _resources"
            )
            con.unregister("_resources")
        entity_batch = _entity_batch(con, fresh, report)
        if entity_batch:
            counts = write_batch_with(con, entity_batch, run_id="events-load", synced_at=now)
            report.stale_ignored += sum(c.stale for c in counts.values())
        changes = [c for p in fresh for c in changesets_of(p.notification_id, p.created_at, p.document)]
        report.changesets_applied += apply_changesets(con, changes, now)
    for p in conflicts:
        con.execute(
            "INSERT INTO webhook_event_conflicts VALUES (?, CAST(? AS TIMESTAMPTZ), CAST(? AS JSON), ?)",
            [p.notification_id, p.record.received_at, p.canonical, now],
        )
    report.conflicts += len(conflicts)
    report.loaded += len(fresh)
    for segment, offset in progress.items():
        con.execute("DELETE FROM webhook_spool_checkpoints WHERE segment = ?", [segment])
        con.execute("INSERT INTO webhook_spool_checkpoints VALUES (?, ?, false, ?)", [segment, offset, now])


def load_events(warehouse: Path, spool: Path) -> LoadReport:
    """Load everything new in the spool; safe to run at any time, and again after any crash."""
    report = LoadReport()
    if not spool.exists():
        return report
    with connect(warehouse) as con:
        checkpoints = dict(con.execute('SELECT segment, "offset" FROM webhook_spool_checkpoints').fetchall())
        for records, progress in _batches(spool, checkpoints):
            with transaction(con):
                _write(con, records, progress, report)
            checkpoints.update(progress)
    report.archived = archive_consumed(spool, checkpoints)
    return report


def archive_consumed(spool: Path, checkpoints: dict[str, int]) -> list[str]:
    """Move loaded segments that no receiver holds any more to `archive/`.

    Loading read every complete record, so a finished segment is consumed; anything past its
    checkpoint is the zero-filled tail or a record cut by a crash, never acknowledged."""
    archive = spool / "archive"
    moved = []
    for path in segments(spool):
        if is_finished(path) and not any(True for _ in read_records(path, checkpoints.get(path.name, 0))):
            archive.mkdir(exist_ok=True)
            shutil.move(str(path), archive / path.name)
            moved.append(path.name)
    return moved
