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
import tempfile
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from shipsync_bench.bounds_common import KEY, Sandbox, bounded, counted, pages, settings_for
from shipsync_bench.processes import SandboxProcess
from shipsync_bench.pull_bounds import daily_sync
from shipsync_bench.results import BenchResult

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


def request_bounds(*, quick: bool) -> list[BenchResult]:
    """Issue 14's sizes; `quick`: a twentieth of them, same verdicts (where a client's fixed costs,
    such as a few probing reads, weigh more against a small bound: the full size judges those)."""
    if quick:
        results = custom_fields(5_000, 1_000, (20, 3), (500, 8)) + daily_sync(5_000, 1_000)
        return [dataclasses.replace(r, name=f"quick size: {r.name}") for r in results]
    return custom_fields(100_000, 20_000, (20, 3), (10_000, 8)) + daily_sync(100_000, 20_000)
