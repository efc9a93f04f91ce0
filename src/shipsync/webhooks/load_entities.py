"""The entities step of `events load`: what the new events carry refreshes its tables, never
rolling a row back.

- Tracking requests: only with an event newer than the one the row last took, every value fitted
  to its column (an odd member becomes NULL; the body stays whole in `webhook_events`).
- Declared types (shipments, containers, transport and estimated events, ports, terminals,
  vessels...): the newest copy of each, stamped with its notification's `created_at` as
  `observed_at`; the upsert keeps a row that holds newer data (odd members go to `leftovers`).
- `container.updated` changesets: applied to the containers after them, unless older than the row.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import duckdb
import pyarrow as pa

from shipsync.api.declared import Declared
from shipsync.warehouse.changesets import Changeset, apply_changesets, changesets_of
from shipsync.warehouse.coerce import fit_columns
from shipsync.warehouse.declared_rows import declared_columns
from shipsync.warehouse.declared_tables import DECLARED_BY_TYPE
from shipsync.warehouse.load import write_batch_with
from shipsync.warehouse.normalize import Batch, tracking_request_columns
from shipsync.warehouse.upsert import sql_types, staged
from shipsync.webhooks.load_steps import Parsed
from shipsync.webhooks.notification import JsonObject

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


def _held(con: duckdb.DuckDBPyConnection, ids: list[str]) -> dict[str, Stamp]:
    """The stamp of the event each tracking request last took, for rows that took one."""
    with staged(con, "_ids", pa.table({"id": pa.array(ids, pa.string())})):
        rows = con.execute(
            "SELECT id, epoch_us(last_event_at), coalesce(last_event_id, '') FROM tracking_requests "
            "WHERE id IN (SELECT id FROM _ids) AND last_event_at IS NOT NULL"
        ).fetchall()
    return {row[0]: (row[1], row[2]) for row in rows}


def _tracking_requests(con: duckdb.DuckDBPyConnection, newest: dict[str, tuple[Stamp, Parsed, JsonObject]]) -> tuple[Batch, int, int]:
    held = _held(con, list(newest))
    keep = []
    stale = 0
    for id_, (stamp, parsed, resource) in newest.items():
        if id_ in held and held[id_] >= stamp:
            stale += 1
        else:
            keep.append((parsed, _well_formed("tracking_request", id_, resource)))
    if not keep:
        return {}, 0, stale
    columns: dict[str, list[Any]] = tracking_request_columns([resource for _, resource in keep])["tracking_requests"]
    columns["last_event_at"] = [parsed.created_at for parsed, _ in keep]
    columns["last_event_id"] = [parsed.notification_id for parsed, _ in keep]
    return {"tracking_requests": fit_columns(columns, sql_types("tracking_requests"))}, len(keep), stale


def refresh_entities(con: duckdb.DuckDBPyConnection, fresh: list[Parsed], now: datetime) -> tuple[int, int]:
    """Write the newest state of each entity the new events carry; (rows refreshed, older copies ignored)."""
    newest: dict[tuple[str, str], tuple[Stamp, Parsed, JsonObject]] = {}
    changesets: list[Changeset] = []
    for parsed in fresh:
        stamp = _stamp(parsed)
        for type_, id_, resource in parsed.entities:
            if type_ == "container_updated_event":
                changesets += changesets_of(parsed.notification_id, parsed.created_at, {"included": [resource]})
            elif (type_, id_) not in newest or newest[type_, id_][0] < stamp:
                newest[type_, id_] = (stamp, parsed, resource)
    requests = {id_: value for (t, id_), value in newest.items() if t == "tracking_request"}
    batch, refreshed, stale = _tracking_requests(con, requests) if requests else ({}, 0, 0)
    by_declaration: dict[type[Declared], list[tuple[Parsed, JsonObject]]] = {}
    for (type_, _), (_, parsed, resource) in newest.items():
        if type_ in DECLARED_BY_TYPE:
            by_declaration.setdefault(DECLARED_BY_TYPE[type_], []).append((parsed, resource))
    for declaration, found in by_declaration.items():
        batch[declaration.table_name] = declared_columns(
            declaration,
            [resource for _, resource in found],
            observed_at=[parsed.created_at for parsed, _ in found],
            event_ids=[parsed.notification_id for parsed, _ in found],
        )
    if batch:
        counts = write_batch_with(con, batch, run_id="events-load", synced_at=now)
        refreshed += sum(c.inserted + c.updated for table, c in counts.items() if table != "tracking_requests")
        stale += sum(c.stale for c in counts.values())
    refreshed += apply_changesets(con, changesets, now)
    return refreshed, stale
