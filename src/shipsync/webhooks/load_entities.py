"""The entities step of `events load`: what the new events carry refreshes its tables, never
rolling a row back.

- Declared types (tracking requests, shipments, containers, transport and estimated events, ports,
  terminals, vessels...): the newest copy of each, stamped with its notification's `created_at` as
  `observed_at`; the upsert keeps a row that holds newer data (odd members go to `leftovers`).
- `container.updated` changesets: applied to the containers after them, unless older than the row.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import duckdb

from shipsync.api.declared import Declared
from shipsync.warehouse.changesets import Changeset, apply_changesets, changesets_of
from shipsync.warehouse.declared_rows import declared_columns
from shipsync.warehouse.declared_tables import DECLARED_BY_TYPE
from shipsync.warehouse.load import write_batch_with
from shipsync.warehouse.normalize import Batch
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
    batch: Batch = {}
    refreshed = stale = 0
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
        refreshed += sum(c.inserted + c.updated for c in counts.values())
        stale += sum(c.stale for c in counts.values())
    refreshed += apply_changesets(con, changesets, now)
    return refreshed, stale
