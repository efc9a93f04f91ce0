"""Requests spent against the fewest the work needs (issue 14): each scenario runs against a large
seeded sandbox in its own process, counts what the sandbox admitted for the key, and sets that
beside a lower bound computed from first principles, with the formula in the row's name.

First principles: a listing page holds 100 records; a value changes with one write; the current
values a file touches are read by the cheapest of the account's listing, one listing per field, or
one request per entity; a record that no listing carries costs one request. What the scenario must
already know (containers in the warehouse, definitions read by an earlier run) is set up before
the counting starts and said in the row.
"""

from __future__ import annotations

import csv
import dataclasses
import math
import tempfile
import time
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import httpx

from shipsync.bench.processes import SandboxProcess
from shipsync.bench.results import BenchResult, at_most
from shipsync.config import Settings, load_settings
from shipsync.pull.listing_marks import MARK
from shipsync.serving import BackgroundServer
from shipsync.warehouse.connection import connect
from shipsync.warehouse.ledger import last_success_parameter
from shipsync.webhooks.load import load_events
from shipsync.webhooks.receiver import Receiver
from shipsync.webhooks.registration import register_webhook
from shipsync.webhooks.writer import SpoolWriter

KEY = "sandbox-key-1"
PAGE = 100
GOAL = 1.25
# The container fields of the service's templates, in the order a file names them.
FIELDS = (
    "po_number",
    "priority",
    "declared_value",
    "handling_flags",
    "customs_cleared_on",
    "delivery_appointment_at",
    "hazardous",
    "customs_broker",
)
OPTIONS = {"priority": ("low", "normal", "high", "urgent"), "handling_flags": ("fragile", "refrigerated", "oversized", "hazmat")}


def pages(records: int) -> int:
    return math.ceil(records / PAGE)


def minutes(requests: float) -> str:
    return f"{requests / 100:,.1f} min at 100/min"


def bounded(name: str, actual: int, bound: int, formula: str) -> BenchResult:
    label = f"{name}: {actual:,} requests = {minutes(actual)} (bound {bound:,} = {formula} = {minutes(bound)})"
    return at_most(label, float(actual), "requests", "lower bound", float(bound), GOAL)


@dataclass
class Sandbox:
    """A running sandbox process, its admitted-requests counter, and plain reads that are not counted."""

    process: SandboxProcess

    def admitted(self) -> int:
        admitted = self.process.stats(KEY)["admitted"]
        return int(str(admitted))

    def get(self, path: str) -> Any:
        response = httpx.get(f"{self.process.api_url}/{path}", headers={"Authorization": f"Token {KEY}"}, timeout=60)
        return response.raise_for_status().json()

    def total(self, path: str) -> int:
        return int(self.get(f"{path}{'&' if '?' in path else '?'}page[size]=1")["meta"]["total"])

    def every(self, path: str) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        for number in range(1, 10**6):
            body = self.get(f"{path}{'&' if '?' in path else '?'}page[size]={PAGE}&page[number]={number}")
            found += body["data"]
            if not body.get("links", {}).get("next"):
                return found
        return found

    def advance(self, query: str) -> dict[str, Any]:
        response = httpx.post(f"{self.process.url}/_admin/advance?{query}", headers={"Authorization": f"Token {KEY}"}, timeout=600)
        result: dict[str, Any] = response.raise_for_status().json()
        return result


def settings_for(sandbox: Sandbox, folder: Path) -> Settings:
    return load_settings(
        api_url=sandbox.process.api_url, api_key=KEY, rate_limit="0", warehouse=folder / "w.duckdb", secrets_file=folder / "secrets.json"
    )


def counted(sandbox: Sandbox, work: Any) -> tuple[int, Any]:
    """What `work()` returned, and the requests the sandbox admitted for it."""
    before = sandbox.admitted()
    result = work()
    return sandbox.admitted() - before, result


# Custom-field files -------------------------------------------------------------------------------


def other_value(slug: str, current: Any, n: int, tag: int) -> str:
    """A cell for `slug` that differs from the value the service holds (`current`, None if none)."""
    if slug in OPTIONS:
        held = current if isinstance(current, list) else [current]
        return next(o for o in OPTIONS[slug] if o not in held)
    if slug == "hazardous":
        return "no" if current is True else "yes"
    day = date(2031, 1, 1) + timedelta(days=(n + tag) % 300)
    return {  # `tag`: each file its own values, so that no file repeats what another wrote
        "po_number": f"BENCH{tag}-{n}",
        "declared_value": f"{500_000 + tag * 100_000 + n}.25",
        "customs_cleared_on": day.isoformat(),
        "delivery_appointment_at": f"{day.isoformat()}T10:00:00Z",
        "customs_broker": f"BENCH{tag}-PARTY-{n}",
    }[slug]


@dataclass(frozen=True)
class FileScenario:
    path: Path
    rows: int
    fields: tuple[str, ...]
    definitions: dict[str, str]  # api_slug -> definition id


def write_file(sandbox: Sandbox, folder: Path, numbers: dict[str, str], rows: int, fields: tuple[str, ...]) -> FileScenario:
    """A file of `rows` containers x `fields` whose every cell changes the value the service holds
    (read beforehand, not counted)."""
    every = sandbox.every("custom_field_definitions?filter[entity_type]=container")
    definitions = {d["attributes"]["api_slug"]: d["id"] for d in every if d["attributes"]["api_slug"] in fields}
    chosen = list(numbers.items())[:rows]
    wanted = {container_id for _, container_id in chosen}
    current: dict[tuple[str, str], Any] = {}
    for slug in fields:
        for value in sandbox.every(f"custom_fields?filter[definition_id]={definitions[slug]}"):
            entity = value["relationships"]["entity"]["data"]["id"]
            if entity in wanted:
                current[(entity, slug)] = value["attributes"]["value"]
    path = folder / f"{rows}x{len(fields)}.csv"
    with path.open("w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["container_number", *fields])
        for n, (number, container_id) in enumerate(chosen):
            writer.writerow([number, *(other_value(slug, current.get((container_id, slug)), n, rows) for slug in fields)])
    return FileScenario(path, len(chosen), fields, definitions)


def value_reads(sandbox: Sandbox, scenario: FileScenario) -> tuple[int, str]:
    """The fewest reads that know the current values of what the file touches, as the account is
    now (not counted): the account's listing, a listing per field, or a request per entity."""
    every_value = pages(sandbox.total("custom_fields"))
    by_field = sum(pages(sandbox.total(f"custom_fields?filter[definition_id]={i}")) for i in scenario.definitions.values())
    reads = min(every_value, by_field, scenario.rows)
    return reads, f"min(all {every_value}, per field {by_field}, per entity {scenario.rows})"


def custom_fields(values: int, containers: int, small: tuple[int, int], large: tuple[int, int]) -> list[BenchResult]:
    """A small file, then a large one first run and re-run, on an account of `values` and `containers`."""
    from shipsync.bulk.apply import apply_file
    from shipsync.pull.tracking import pull_containers

    shipments = max(1, containers * 2 // 5)
    args = ["--rate-limit", "0", "--documents", "0", "--api-key", KEY, "--shipments", str(shipments)]
    args += ["--containers", str(containers), "--custom-field-values", str(values)]
    results: list[BenchResult] = []
    account = f"{values:,} values, {containers:,} containers"
    with tempfile.TemporaryDirectory(prefix="shipsync-bounds-") as tmp, SandboxProcess(*args) as process:
        sandbox, folder = Sandbox(process), Path(tmp)
        settings = settings_for(sandbox, folder)
        pull_containers(settings)  # the warehouse knows the containers by number (not counted)
        numbers = {str(c["attributes"]["number"]): str(c["id"]) for c in sandbox.every("containers")}
        warm = write_file(sandbox, folder, numbers, 1, FIELDS[:1])
        apply_file(settings, "custom-fields", warm.path, dry_run=True)  # definitions known, as after any earlier run
        for (rows, width), runs in ((small, ("first run",)), (large, ("first run", "re-run"))):
            scenario = write_file(sandbox, folder, numbers, rows, FIELDS[:width])
            for run in runs:
                reads, read_formula = value_reads(sandbox, scenario)
                path = scenario.path
                spent, report = counted(sandbox, lambda: apply_file(settings, "custom-fields", path))  # noqa: B023 - called at once
                writes = scenario.rows * width if run == "first run" else 0
                if report.writes != writes or report.problems:
                    unchanged = sorted({f"{c.field} ({c.before!r})" for c in report.changes if c.action == "skip"})[:5]
                    problems = [p.describe() for p in report.problems[:3]]
                    raise RuntimeError(f"{scenario.path.name} {run}: {report.writes} writes, not {writes}: {unchanged} {problems}")
                name = f"apply {scenario.rows:,} x {width} custom fields, {run} ({account})"
                results.append(bounded(name, spent, reads + writes, f"reads {read_formula} + writes {writes:,}"))
    return results


# Pulls --------------------------------------------------------------------------------------------

SINGLES = ("pull_places", "pull_metro_areas", "pull_document_schemas")  # one request per record


def singles_of(records: list[Any]) -> int:
    """Records that no listing carries (ports, terminals, vessels, metro areas, schemas) and that
    this run had to read: one GET each, as many as those pulls asked for (the bound takes their
    choice of what is stale as given)."""
    return sum(int(record.stats.requests) for record in records if record.flow in SINGLES)


def _walked(warehouse: Path, sql: str) -> int:
    """A count over what the warehouse holds after a daily run: the records that run had to read."""
    with connect(warehouse, read_only=True) as con:
        row = con.execute(sql).fetchone()
    return int(row[0]) if row else 0


def _recent_documents(warehouse: Path, mark: str | None, recheck_days: float) -> int:
    """Documents created after the last run's mark, or within the re-check window before it."""
    return _walked(
        warehouse, f"SELECT count(*) FROM documents WHERE created_at >= TIMESTAMPTZ '{mark}' - INTERVAL {recheck_days * 24} HOUR"
    )


def _marks(warehouse: Path) -> dict[str, str | None]:
    return {flow: last_success_parameter(warehouse, flow, MARK) for flow in ("pull_documents", "pull_shipments", "pull_containers")}


def polling_day(warehouse: Path, marks: dict[str, str | None], recheck_days: float, singles: int) -> tuple[int, str]:
    """The fewest requests a day's `pull all` needs without a webhook feed: the documents created
    after the last mark or within the re-check window before it (the job re-reads those), the
    tracking requests' one page, the shipments created and the containers refreshed since the last
    marks (one page at least, to see that nothing else is new), and the single records."""
    documents = _recent_documents(warehouse, marks["pull_documents"], recheck_days)
    shipments = _walked(warehouse, f"SELECT count(*) FROM shipments WHERE created_at > TIMESTAMPTZ '{marks['pull_shipments']}'")
    refreshed = _walked(
        warehouse,
        "SELECT count(*) FROM containers WHERE greatest(pod_last_tracking_request_at, shipment_last_tracking_request_at)"
        f" > TIMESTAMPTZ '{marks['pull_containers']}'",
    )
    bound = pages(documents) + 1 + max(1, pages(shipments)) + max(1, pages(refreshed)) + singles
    formula = (
        f"documents new or in the {recheck_days:g}-day re-check window {pages(documents)} + tracking requests 1"
        f" + shipments created {max(1, pages(shipments))} + containers refreshed ({refreshed:,}) {max(1, pages(refreshed))}"
        f" + records no listing carries {singles}"
    )
    return bound, formula


def deliveries_received(sandbox: Sandbox, settings: Settings) -> None:
    """Wait until the sandbox has delivered what it owes, then load the spool (not counted: pushed)."""
    deadline = time.monotonic() + 600
    while httpx.get(f"{sandbox.process.url}/_admin/deliveries", headers={"Authorization": f"Token {KEY}"}, timeout=60).json()["pending"]:
        if time.monotonic() > deadline:
            raise RuntimeError("the sandbox did not deliver within 10 minutes")
        time.sleep(0.2)
    load_events(settings.warehouse, settings.spool_dir)


def daily_sync(documents: int, containers: int) -> list[BenchResult]:
    """The first full backfill of an account; a day later the daily `pull all` after 1% changed,
    found by polling; a day after that, the same with a webhook delivering the changes."""
    from shipsync.pull.everything import pull_all

    shipments = max(1, containers * 2 // 5)
    args = ["--rate-limit", "0", "--documents", str(documents), "--api-key", KEY]
    args += ["--shipments", str(shipments), "--containers", str(containers)]
    account = f"{documents:,} documents, {containers:,} containers"
    with tempfile.TemporaryDirectory(prefix="shipsync-bounds-") as tmp, SandboxProcess(*args) as process:
        sandbox = Sandbox(process)
        settings = settings_for(sandbox, Path(tmp))
        requests = sandbox.total("tracking_requests")
        spent, records = counted(sandbox, lambda: pull_all(settings))
        singles = singles_of(records)
        # Shipments: every one comes included with its containers (none is without), so 0 pages.
        bound = pages(documents) + pages(containers) + pages(requests) + 1 + singles
        formula = (
            f"documents {pages(documents)} + containers {pages(containers)} + tracking requests {pages(requests)}"
            f" + carriers 1 + records no listing carries {singles}"
        )
        results = [bounded(f"first full backfill, pull all ({account})", spent, bound, formula)]
        new, moved = documents // 100, containers // 100
        marks = _marks(settings.warehouse)
        sandbox.advance(f"hours=24&documents={new}&containers={moved}")
        spent, records = counted(sandbox, lambda: pull_all(settings))
        bound, formula = polling_day(settings.warehouse, marks, settings.document_recheck_days, singles_of(records))
        results.append(bounded(f"daily sync, pull all, 1% changed, found by polling ({account})", spent, bound, formula))

        receiver = Receiver(SpoolWriter(settings.spool_dir), [])
        with BackgroundServer(receiver) as hooks:
            webhook = register_webhook(settings, f"{hooks.url}/webhook", [], all_events=True)  # once, not daily: not counted
            receiver.secrets.append(str(webhook.secret))
            marks = _marks(settings.warehouse)
            changed = sandbox.advance(f"hours=24&documents={new}&containers={moved}")
            deliveries_received(sandbox, settings)
        spent, records = counted(sandbox, lambda: pull_all(settings))
        singles = singles_of(records)
        documents_read = _recent_documents(settings.warehouse, marks["pull_documents"], settings.document_recheck_days)
        bound = pages(documents_read) + 1 + singles
        formula = (
            f"documents new or in the re-check window {pages(documents_read)} + tracking requests 1"
            f" + {changed['containers']} changed containers 0 (delivered) + records no listing carries {singles}"
        )
        results.append(bounded(f"daily sync, pull all, 1% changed, webhooks delivering ({account})", spent, bound, formula))
    return results


def request_bounds(*, quick: bool) -> list[BenchResult]:
    """Issue 14's sizes; `quick`: a twentieth of them, same verdicts (where a client's fixed costs,
    such as a few probing reads, weigh more against a small bound: the full size judges those)."""
    if quick:
        results = custom_fields(5_000, 1_000, (20, 3), (500, 8)) + daily_sync(5_000, 1_000)
        return [dataclasses.replace(r, name=f"quick size: {r.name}") for r in results]
    return custom_fields(100_000, 20_000, (20, 3), (10_000, 8)) + daily_sync(100_000, 20_000)
