"""Bringing the warehouse up to date with the service before a diff: definitions with their
options, current custom field values, tracking requests, and the shipments whose tags a file
edits. Fetched, then staged in the apply's run (values and definitions the service no longer has
are deleted at its commit); the plan reads them through `Warehouse.preview`."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import duckdb
import pyarrow as pa

from shipsync.api import AsyncShipsyncClient, run_with_client
from shipsync.api.account_models import CustomField, CustomFieldDefinition, TrackingRequest
from shipsync.api.jsonapi import JsonObject
from shipsync.api.transport import ClientStats
from shipsync.bulk.kind import RefreshRequest, Scope
from shipsync.bulk.lookup import Knowledge, read_knowledge
from shipsync.bulk.model import apply_flow
from shipsync.bulk.progress import RequestBudget, Stage, no_progress
from shipsync.bulk.read_values import ValuesRead, read_values
from shipsync.config import Settings
from shipsync.errors import NotFoundError
from shipsync.pull.resources import PULLED_BY_NAME
from shipsync.warehouse.declared_rows import Batch, declared_batch, declared_tables_batch, observed_now
from shipsync.warehouse.ledger import FlowName, RunRecord, WarehouseRun, last_started, last_success
from shipsync.warehouse.load import write_batch
from shipsync.warehouse.normalize import merge, option_columns
from shipsync.warehouse.unit_of_work import CommitContext

DEFINITIONS_STALE_AFTER = timedelta(minutes=15)
MAX_REFRESH_ROUNDS = 4
REFRESH_FLOW: FlowName = "refresh_definitions"  # the ledger's row of a refresh of definitions within an apply
LINES_FLOW = PULLED_BY_NAME["shipping-lines"].flow  # a read of the whole listing within an apply is that pull
LINES_STALE_AFTER = timedelta(days=1)
ENUM_TYPES = ("enum", "enum_multi")
# Above this many shipments, one paged listing (100 a page) costs fewer requests than one read each.
SHIPMENTS_BY_LISTING = 300


async def _fetch_definitions(client: AsyncShipsyncClient) -> tuple[list[JsonObject], dict[str, list[JsonObject]]]:
    definitions = [r async for page in client.custom_field_definitions.list_pages() for r in page.data]
    enum_ids = [d["id"] for d in definitions if (d.get("attributes") or {}).get("data_type") in ENUM_TYPES]

    async def options_of(definition_id: str) -> tuple[str, list[JsonObject]]:
        return definition_id, [r async for p in client.custom_field_definitions.option_pages(definition_id) for r in p.data]

    options = dict(await asyncio.gather(*(options_of(i) for i in enum_ids)))
    return definitions, options


async def _fetch_custom_fields(client: AsyncShipsyncClient) -> list[JsonObject]:
    return [r async for page in client.custom_fields.list_pages() for r in page.data]


async def _fetch_tracking_requests(client: AsyncShipsyncClient, numbers: Sequence[str], since: str | None) -> list[JsonObject]:
    """Those updated since `since` (all when None), plus any asked for by number."""

    async def listing(**filters: str | None) -> list[JsonObject]:
        return [r async for p in client.tracking_requests.list_pages(**filters) for r in p.data]  # type: ignore[arg-type]

    found = await asyncio.gather(listing(updated_since=since), *(listing(request_number=n) for n in numbers))
    return [r for group in found for r in group]


async def _fetch_shipments(client: AsyncShipsyncClient, ids: Sequence[str]) -> list[JsonObject]:
    """The shipments as they are now (their tags are what a tags_add is computed against)."""
    if len(ids) > SHIPMENTS_BY_LISTING:
        wanted = set(ids)
        return [r async for page in client.shipments.list_pages() for r in page.data if str(r["id"]) in wanted]

    async def one(shipment_id: str) -> list[JsonObject]:
        try:
            return (await client.shipments.get_page(shipment_id)).data[:1]
        except NotFoundError:
            return []  # the plan says the shipment could not be read

    return [r for group in await asyncio.gather(*(one(i) for i in ids)) for r in group]


def definitions_fresh(con: duckdb.DuckDBPyConnection) -> bool:
    """Fresh: refreshed recently, and not changed since by an apply of definitions."""
    refreshed = last_started(con, [REFRESH_FLOW], ["completed"])
    if refreshed is None:
        return False
    applied = last_started(con, [apply_flow("custom-field-definitions")])
    return refreshed > datetime.now(UTC) - DEFINITIONS_STALE_AFTER and (applied is None or refreshed > applied)


# What to re-read in each round (0, 1, ...) given what is known so far; None when done.
RefreshRounds = Callable[[duckdb.DuckDBPyConnection, Knowledge, int], RefreshRequest | None]


def refreshed_knowledge(
    settings: Settings, run: WarehouseRun, record: RunRecord, scope: Scope, rounds: RefreshRounds, progress: Stage = no_progress
) -> Knowledge:
    """What a plan (or an undo) reads: the warehouse, refreshed from the service in rounds until
    `rounds` asks for nothing more (each round's reads see what the rounds before staged; their
    requests count in `record`)."""
    known = read_knowledge(run.con, entities=scope.entities, tracking=scope.tracking, lines=scope.lines)
    parties: dict[str, str] | None = None
    for round_number in range(MAX_REFRESH_ROUNDS):
        request = rounds(run.con, known, round_number)
        if request is None:
            break
        refreshed = refresh(settings, run, request, progress=progress)
        record.add_stats(refreshed.stats)
        parties = refreshed.parties if refreshed.parties is not None else parties
        with run.warehouse.preview():
            known = read_knowledge(run.con, entities=scope.entities, tracking=scope.tracking, lines=scope.lines)
        known.parties = parties
    return known


@dataclass(frozen=True)
class Refreshed:
    """What a refresh cost, and what it read that the warehouse does not keep (the parties)."""

    stats: ClientStats
    parties: dict[str, str] | None = None


def _parties(resources: Sequence[JsonObject]) -> dict[str, str]:
    return {str(r["id"]): str((r.get("attributes") or {}).get("company_name") or "") for r in resources}


def refresh(settings: Settings, run: WarehouseRun, request: RefreshRequest, *, progress: Stage = no_progress) -> Refreshed:
    """Fetch what is asked, then stage it in the run (replacing what the service no longer has)."""
    if request == RefreshRequest():
        return Refreshed(ClientStats())  # nothing asked: no client, no transaction

    async def fetch(client: AsyncShipsyncClient) -> tuple[Any, Any, Any, Any, ValuesRead | None, Any, Any, ClientStats]:
        defs = await _fetch_definitions(client) if request.definitions else None
        values = await _fetch_custom_fields(client) if request.custom_fields else None
        scoped = (
            await read_values(client, request.values, progress=progress, budget=RequestBudget(settings.rate))
            if request.values is not None and not request.custom_fields
            else None
        )
        trs = await _fetch_tracking_requests(client, request.request_numbers, request.tracking_since) if request.tracking_requests else None
        shipments = await _fetch_shipments(client, request.shipment_ids) if request.shipment_ids else None
        lines = (await client.shipping_lines.list_page()).data if request.shipping_lines else None
        parties = (await client.parties.list_all()).data if request.parties else None
        return defs, values, trs, shipments, scoped, lines, parties, client.stats

    observed_at = observed_now()
    defs, values, trs, shipments, scoped, lines, parties, stats = run_with_client(settings.client_options(), fetch)
    if scoped is not None and scoped.route == "listing":
        values, scoped = scoped.values, None  # the whole account's values: as a full refresh
    batch: Batch = {}
    if defs is not None:
        merge(batch, declared_tables_batch(CustomFieldDefinition, defs[0], observed_at=observed_at))
        for definition_id, options in defs[1].items():
            merge(batch, option_columns(definition_id, options, observed_at=observed_at))
    if values is not None:
        merge(batch, declared_tables_batch(CustomField, values, observed_at=observed_at))
    if scoped is not None and scoped.values:
        merge(batch, declared_tables_batch(CustomField, scoped.values, observed_at=observed_at))
    if trs:
        merge(batch, declared_tables_batch(TrackingRequest, trs, observed_at=observed_at))
    if shipments:
        merge(batch, declared_batch(shipments, observed_at=observed_at))
    if lines:
        merge(batch, declared_batch(lines, observed_at=observed_at))
    write_batch(run.warehouse, batch)
    if values is not None:  # values deleted at the service are gone here too
        _delete_missing(run, "custom_fields", [r["id"] for r in values])
    if scoped is not None:  # ... within what was read
        _delete_missing_in_scope(run, scoped)
    if defs is not None:
        _delete_missing(run, "custom_field_definitions", [d["id"] for d in defs[0]])
        _delete_missing(run, "custom_field_options", [o["id"] for opts in defs[1].values() for o in opts])
        run.inner_run(REFRESH_FLOW, stats.requests)
    if lines is not None:  # the whole listing, as a pull of it reads it
        run.inner_run(LINES_FLOW, 1)
    return Refreshed(stats, _parties(parties) if parties is not None else None)


def lines_fresh(con: duckdb.DuckDBPyConnection) -> bool:
    """The warehouse's shipping lines were read in full lately (they change rarely)."""
    read = last_success(con, LINES_FLOW)
    return read is not None and read > datetime.now(UTC) - LINES_STALE_AFTER


def _delete_missing_in_scope(run: WarehouseRun, read: ValuesRead) -> None:
    """Values of the read's entities (or definitions) that the service no longer has."""
    keep = run.warehouse.stage("custom_fields_kept", pa.table({"id": pa.array([str(r["id"]) for r in read.values], pa.string())}))
    if read.route == "entities":
        kinds, ids = zip(*sorted(read.scope.entities), strict=True) if read.scope.entities else ((), ())
        scope = pa.table({"a": pa.array(kinds, pa.string()), "b": pa.array(ids, pa.string())})
        where = "EXISTS (SELECT 1 FROM {scope} s WHERE s.a = custom_fields.entity_type AND s.b = custom_fields.entity_id)"
    else:
        definitions = sorted(read.scope.definitions.items())
        scope = pa.table({"a": pa.array([d for d, _ in definitions], pa.string()), "b": pa.array([s for _, s in definitions], pa.string())})
        where = "(definition_id IN (SELECT a FROM {scope}) OR api_slug IN (SELECT b FROM {scope}))"
    scoped = run.warehouse.stage("custom_fields_scope", scope)
    statement = f"DELETE FROM custom_fields WHERE {where.format(scope=scoped)} AND id NOT IN (SELECT id FROM {keep})"

    def delete(con: duckdb.DuckDBPyConnection, commit: CommitContext) -> None:
        con.execute(statement)

    run.warehouse.defer(["custom_fields"], delete)


def _delete_missing(run: WarehouseRun, table: str, keep: list[str]) -> None:
    kept = run.warehouse.stage(f"{table}_kept", pa.table({"id": pa.array(keep, pa.string())}))
    statement = f"DELETE FROM {table} WHERE id NOT IN (SELECT id FROM {kept})"

    def delete(con: duckdb.DuckDBPyConnection, commit: CommitContext) -> None:
        con.execute(statement)

    run.warehouse.defer([table], delete)
