"""Pull metro areas and document schemas: given ids, or discovered from what the warehouse holds,
skipping those fetched within the freshness window unless forced."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta

from shipsync.api import AsyncShipsyncClient
from shipsync.api.document_models import DocumentSchema
from shipsync.api.jsonapi import Page
from shipsync.api.place_models import MetroArea
from shipsync.config import Settings
from shipsync.pull.fetch import fetch_each
from shipsync.pull.steps import BatchOutcome, Progress, StepRunner, absorb, in_own_run, no_progress, outcome_of, run_direct
from shipsync.warehouse.declared_rows import declared_tables_batch
from shipsync.warehouse.identifiers import ident
from shipsync.warehouse.ledger import FlowName, RunRecord, WarehouseRun
from shipsync.warehouse.load import write_batch
from shipsync.warehouse.unit_of_work import Warehouse

DEFAULT_FRESHNESS = timedelta(days=7)
BATCH = 200

# Where UN/LOCODEs appear in the warehouse: ports of included shipments, and (once the event log
# exists) locations of transport events.
LOCODE_SOURCES = (
    "SELECT port_of_lading_locode AS code FROM shipments "
    "UNION SELECT port_of_discharge_locode FROM shipments "
    "UNION SELECT destination_locode FROM shipments",
    "SELECT location_locode FROM transport_events UNION SELECT location_locode FROM estimated_events",
    "SELECT attributes->>'location_locode' FROM webhook_event_resources WHERE type = 'transport_event' "
    "UNION SELECT attributes->>'code' FROM webhook_event_resources WHERE type IN ('port', 'metro_area') "
    "UNION SELECT attributes->>'locode' FROM webhook_event_resources WHERE type IN ('port', 'metro_area')",
)
# An extraction names the public `schema_version` of its schema; with the document's type it
# names the schema (`document_schemas` are addressed as `<document_type>@<date>`).
EXTRACTED_SCHEMAS = (
    "SELECT DISTINCT coalesce(d.document_type_manual, d.document_type), r.schema_version, s.id "
    "FROM documents d JOIN document_representations r ON r.id = d.last_document_representation_id "
    "LEFT JOIN document_schemas s ON s.document_type = coalesce(d.document_type_manual, d.document_type) "
    "AND s.schema_version = r.schema_version "
    "WHERE r.schema_version IS NOT NULL"
)
_DATE_VERSION = re.compile(r"^v?(\d{4})[-./]?(\d{2})[-./]?(\d{2})$")


def discover(warehouse: Warehouse, queries: Sequence[str], valid: Callable[[str], bool]) -> list[str]:
    """Distinct non-empty values the queries find (what this run staged included)."""
    found: set[str] = set()
    with warehouse.seeing_pending():
        for query in queries:
            found.update(str(r[0]) for r in warehouse.con.execute(query).fetchall() if r[0])
    return sorted(v for v in found if valid(v))


def schema_id(document_type: str, schema_version: str) -> str | None:
    """The id to read a schema by, from a document's type and its extraction's public version:
    `<type>@<date>` when the version carries the date (`2026.03.23`, `2026-03-23`, `20260323`)."""
    if "@" in schema_version:
        return schema_version
    match = _DATE_VERSION.match(schema_version.strip())
    return f"{document_type}@{match[1]}-{match[2]}-{match[3]}" if match and document_type else None


def extracted_schemas(warehouse: Warehouse) -> tuple[list[str], list[str]]:
    """Schema ids the warehouse's extractions follow (this run's staged ones included), and why no
    id can be made for the others."""
    with warehouse.seeing_pending():
        rows = warehouse.con.execute(EXTRACTED_SCHEMAS).fetchall()
    ids: set[str] = set()
    unnamed: list[str] = []
    for document_type, version, known_id in rows:
        found = known_id or schema_id(document_type or "", version)
        if found:
            ids.add(found)
        elif not document_type:
            unnamed.append(f"version {version} of a document the service gave no type")
        else:
            unnamed.append(f"{document_type} {version}: its version carries no date")
    return sorted(ids), sorted(unnamed)


def fresh_keys(warehouse: Warehouse, table: str, key: str, keys: Sequence[str], window: timedelta) -> set[str]:
    """The keys read within the window (`observed_at` moves whenever a record is read, changed or not)."""
    if not keys:
        return set()
    cutoff = datetime.now(UTC) - window
    rows = warehouse.con.execute(f"SELECT {ident(key)} FROM {ident(table)} WHERE observed_at >= ?", [cutoff]).fetchall()
    return {r[0] for r in rows} & set(keys)


def is_locode(value: str) -> bool:
    return len(value) == 5 and value[:2].isalpha() and value[2:].isalnum()


async def _metro_area(client: AsyncShipsyncClient, key: str) -> Page:
    """One metro area; an answer that leaves its `code` out (or null) is the one asked for, when it
    was asked for by its UN/LOCODE (what the discovery of metro areas to read looks for)."""
    page = await client.metro_areas.get_page(key)
    for resource in page.data:
        attributes = resource.get("attributes")
        if not isinstance(attributes, dict):
            attributes = resource["attributes"] = {}
        if not isinstance(attributes.get("code"), str) or not attributes["code"]:
            unnamed = resource.get("")
            attributes["code"] = key if is_locode(key) else unnamed if isinstance(unnamed, str) and is_locode(unnamed) else None
    return page


def metro_areas_batch(settings: Settings, warehouse: Warehouse, ids: Sequence[str]) -> BatchOutcome:
    fetched = fetch_each(settings, ids, _metro_area)
    write_batch(warehouse, declared_tables_batch(MetroArea, fetched.data, observed_at=fetched.observed_at))
    return outcome_of(fetched)


def document_schemas_batch(settings: Settings, warehouse: Warehouse, ids: Sequence[str]) -> BatchOutcome:
    fetched = fetch_each(settings, ids, lambda client, i: client.document_schemas.get_page(i))
    write_batch(warehouse, declared_tables_batch(DocumentSchema, fetched.data, observed_at=fetched.observed_at))
    return outcome_of(fetched)


def _pull_reference(
    run: WarehouseRun,
    settings: Settings,
    flow: FlowName,
    ids: Sequence[str],
    *,
    discovered: Callable[[Warehouse], tuple[list[str], list[str]]],
    table: str,
    key: str,
    force: bool,
    freshness: timedelta,
    batch: Callable[[Settings, Warehouse, Sequence[str]], BatchOutcome],
    runner: StepRunner,
    progress: Progress,
) -> RunRecord:
    settings.require_api_key()
    given = [i.strip() for i in ids if i.strip()]
    found, unnamed = ([], []) if given else discovered(run.warehouse)
    wanted = list(dict.fromkeys(given)) or found
    skipped = set() if force else fresh_keys(run.warehouse, table, key, wanted, freshness)
    todo = [i for i in wanted if i not in skipped]
    params = {
        "given": len(given),
        "discovered": 0 if given else len(wanted),
        "fresh_skipped": len(skipped),
        "force": force,
    }
    with run.step(flow, params) as record:
        record.errors.extend(f"cannot name the schema of {pair}" for pair in unnamed[:100])
        for start in range(0, len(todo), BATCH):
            chunk = todo[start : start + BATCH]
            absorb(record, runner(table.replace("_", "-"), batch, settings, run.warehouse, chunk))
            progress(len(chunk))
    return record


def pull_metro_areas_step(
    run: WarehouseRun,
    settings: Settings,
    *,
    ids: Sequence[str] = (),
    force: bool = False,
    freshness: timedelta = DEFAULT_FRESHNESS,
    runner: StepRunner = run_direct,
    progress: Progress = no_progress,
) -> RunRecord:
    upper = [i.strip().upper() if is_locode(i.strip()) else i.strip() for i in ids]
    return _pull_reference(
        run,
        settings,
        "pull_metro_areas",
        upper,
        discovered=lambda warehouse: (discover(warehouse, LOCODE_SOURCES, is_locode), []),
        table="metro_areas",
        key="code",
        force=force,
        freshness=freshness,
        batch=metro_areas_batch,
        runner=runner,
        progress=progress,
    )


def pull_document_schemas_step(
    run: WarehouseRun,
    settings: Settings,
    *,
    ids: Sequence[str] = (),
    force: bool = False,
    freshness: timedelta = DEFAULT_FRESHNESS,
    runner: StepRunner = run_direct,
    progress: Progress = no_progress,
) -> RunRecord:
    return _pull_reference(
        run,
        settings,
        "pull_document_schemas",
        ids,
        discovered=extracted_schemas,
        table="document_schemas",
        key="id",
        force=force,
        freshness=freshness,
        batch=document_schemas_batch,
        runner=runner,
        progress=progress,
    )


def pull_metro_areas(
    settings: Settings,
    *,
    ids: Sequence[str] = (),
    force: bool = False,
    freshness: timedelta = DEFAULT_FRESHNESS,
    runner: StepRunner = run_direct,
    progress: Progress = no_progress,
) -> RunRecord:
    """`pull_metro_areas_step` as a run of its own: one snapshot when it commits."""
    return in_own_run(
        settings, "pull_metro_areas", pull_metro_areas_step, ids=ids, force=force, freshness=freshness, runner=runner, progress=progress
    )


def pull_document_schemas(
    settings: Settings,
    *,
    ids: Sequence[str] = (),
    force: bool = False,
    freshness: timedelta = DEFAULT_FRESHNESS,
    runner: StepRunner = run_direct,
    progress: Progress = no_progress,
) -> RunRecord:
    """`pull_document_schemas_step` as a run of its own: one snapshot when it commits."""
    return in_own_run(
        settings,
        "pull_document_schemas",
        pull_document_schemas_step,
        ids=ids,
        force=force,
        freshness=freshness,
        runner=runner,
        progress=progress,
    )
