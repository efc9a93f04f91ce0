"""The entities step of `events load`: included tracking requests, shipments and containers refresh
their tables, only with an event newer than the one the row last took (so deliveries out of order
never roll a row back), and with every value fitted to its column (an odd member becomes NULL;
the body stays whole in `webhook_events`).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import duckdb
import pyarrow as pa

from shipsync.warehouse.coerce import fit_columns
from shipsync.warehouse.load import write_batch_with
from shipsync.warehouse.normalize import Batch, related_columns, tracking_request_columns
from shipsync.warehouse.upsert import sql_types, staged
from shipsync.webhooks.load_steps import Parsed
from shipsync.webhooks.notification import JsonObject

ENTITY_TABLES = {"tracking_request": "tracking_requests", "shipment": "shipments", "container": "containers"}
_EARLIEST = -(2**63)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
Stamp = tuple[int, str]  # (event time in µs since the epoch, notification id): later stamps win


def _stamp(parsed: Parsed) -> Stamp:
    if parsed.created_at is None:
        return _EARLIEST, parsed.notification_id
    return (datetime.fromisoformat(parsed.created_at) - _EPOCH) // _MICROSECOND, parsed.notification_id


def _well_formed(type_: str, id_: str, resource: JsonObject) -> JsonObject:
    """The resource with members of the wrong type dropped, as the column builders expect it."""
    attributes, relationships, links = (resource.get(name) for name in ("attributes", "relationships", "links"))
    return {
        "type": type_,
        "id": id_,
        "attributes": attributes if isinstance(attributes, dict) else {},
        "relationships": {k: v for k, v in relationships.items() if isinstance(v, dict)} if isinstance(relationships, dict) else {},
        "links": links if isinstance(links, dict) else {},
    }


def _held(con: duckdb.DuckDBPyConnection, table: str, ids: list[str]) -> dict[str, Stamp]:
    """The stamp of the event each row last took, for rows that took one."""
    with staged(con, "_ids", pa.table({"id": pa.array(ids, pa.string())})):
        rows = con.execute(
            f"SELECT id, epoch_us(last_event_at), coalesce(last_event_id, '') FROM {table} "
            "WHERE id IN (SELECT id FROM _ids) AND last_event_at IS NOT NULL"
        ).fetchall()
    return {row[0]: (row[1], row[2]) for row in rows}


def refresh_entities(con: duckdb.DuckDBPyConnection, fresh: list[Parsed], now: datetime) -> tuple[int, int]:
    """Write the newest state of each entity the new events carry; (rows refreshed, older events ignored)."""
    newest: dict[tuple[str, str], tuple[Stamp, Parsed, JsonObject]] = {}
    for parsed in fresh:
        if not parsed.entities:
            continue
        stamp = _stamp(parsed)
        for type_, id_, resource in parsed.entities:
            if (type_, id_) not in newest or newest[type_, id_][0] < stamp:
                newest[type_, id_] = (stamp, parsed, resource)
    batch: Batch = {}
    refreshed = stale = 0
    for type_, table in ENTITY_TABLES.items():
        candidates = {id_: value for (t, id_), value in newest.items() if t == type_}
        if not candidates:
            continue
        held = _held(con, table, list(candidates))
        keep = []
        for id_, (stamp, parsed, resource) in candidates.items():
            if id_ in held and held[id_] >= stamp:
                stale += 1
            else:
                keep.append((parsed, _well_formed(type_, id_, resource)))
        if not keep:
            continue
        resources = [resource for _, resource in keep]
        columns: dict[str, list[Any]] = (
            tracking_request_columns(resources)[table] if type_ == "tracking_request" else related_columns(resources)
        )
        columns["last_event_at"] = [parsed.created_at for parsed, _ in keep]
        columns["last_event_id"] = [parsed.notification_id for parsed, _ in keep]
        batch[table] = fit_columns(columns, sql_types(table))
        refreshed += len(keep)
    if batch:
        write_batch_with(con, batch, run_id="events-load", synced_at=now)
    return refreshed, stale
