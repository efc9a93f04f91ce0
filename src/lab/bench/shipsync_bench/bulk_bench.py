"""Spreadsheet benchmarks: reading a 100,000-row x 8-field XLSX of typed cells, and validating and
diffing it (times apart, peak RSS); the write requests of re-running an unchanged 10,000-row file
against the sandbox."""

from __future__ import annotations

import csv
import json
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import date, datetime
from pathlib import Path

from shipsync.bulk.lookup import Definition, Knowledge, Option
from shipsync.iso6346 import check_digit
from shipsync_bench.processes import SandboxProcess
from shipsync_bench.results import BenchResult, under
from shipsync_bench.xlsx_file import write_xlsx
from shipsync_sandbox.reference import TEMPLATE_DEFINITIONS

SLUGS = (
    "po_number",
    "priority",
    "handling_flags",
    "declared_value",
    "customs_cleared_on",
    "delivery_appointment_at",
    "hazardous",
    "customs_broker",
)


def _number(n: int) -> str:
    first = f"BNCU{n:06d}"
    return first + str(check_digit(first))


def knowledge(rows: int) -> Knowledge:
    known = Knowledge()
    for spec in TEMPLATE_DEFINITIONS:
        options = [Option(o, o, o, i) for i, o in enumerate(spec.get("options", []))]
        names = ("data_type", "validation", "default_format", "default_value", "reference_type", "entity_type")
        attributes = {k: spec.get(k) for k in names}
        known.definitions[spec["api_slug"]] = Definition(
            spec["api_slug"], spec["api_slug"], spec["entity_type"], spec["data_type"], attributes, options
        )
    for n in range(rows):
        known.containers_by_number[_number(n)] = [f"c{n}"]
        if n % 2:  # half the containers already carry a PO number: some updates, some unchanged
            known.values[("container", f"c{n}", "po_number")] = (f"cf{n}", f"PO-{n}" if n % 4 == 1 else "OLD")
    return known


def wide_rows(rows: int, *, typed: bool) -> Iterator[list[object]]:
    """The header and `rows` rows of the wide file: text as a CSV holds it, or typed as Excel does."""
    yield ["Container Number", *SLUGS]
    for n in range(rows):
        flags = "fragile; oversized" if n % 5 == 0 else ""
        typed_cells: list[object] = [1000 + n + 0.5, date(2026, 3, 15), datetime(2026, 5, 11, 18, 30), n % 2 == 0]
        text_cells: list[object] = [f"{1000 + n:,}.50", "03/15/2026", "2026-05-11T18:30:00Z", ["yes", "no"][n % 2]]
        cells = typed_cells if typed else text_cells
        yield [_number(n), f"PO-{n}", ["low", "High", "urgent"][n % 3], flags, *cells, f"party-{n % 10}"]


def write_wide_file(path: Path, rows: int) -> None:
    """The wide file as CSV (`.csv`) or as an XLSX with typed cells and shared strings (`.xlsx`)."""
    if path.suffix == ".xlsx":
        write_xlsx(path, wide_rows(rows, typed=True))
        return
    with path.open("w", newline="") as out:
        csv.writer(out).writerows(wide_rows(rows, typed=False))


def validate_in_process(path: Path, rows: int) -> dict[str, object]:
    """Read, then validate + diff, timed apart; then the same read by calamine alone (the floor
    under pandas), after the others so that it cannot warm their caches."""
    from python_calamine import load_workbook

    from shipsync.bulk.apply import plan_without_gc_pauses
    from shipsync.bulk.kinds import kind_for
    from shipsync.bulk.reader import read_sheet

    known = knowledge(rows)
    started = time.perf_counter()
    sheet = read_sheet(path)
    read = time.perf_counter()
    changes, problems = plan_without_gc_pauses(kind_for("custom-fields"), sheet, known, False)
    planned = time.perf_counter()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    del sheet, changes
    floor = time.perf_counter()
    load_workbook(path).get_sheet_by_index(0).to_python(skip_empty_area=False)
    return {
        "read_seconds": read - started,
        "plan_seconds": planned - read,
        "seconds": planned - started,
        "calamine_seconds": time.perf_counter() - floor,
        "peak_rss_mb": peak,
        "problems": len(problems),
        "first_problem": problems[0].describe() if problems else "",
    }


def validation(rows: int = 100_000) -> list[BenchResult]:
    """Read, validate and diff a rows x 8-field XLSX of typed cells, in a process of its own."""
    with tempfile.TemporaryDirectory(prefix="shipsync-bench-") as tmp:
        path = Path(tmp) / "wide.xlsx"
        write_wide_file(path, rows)
        done = subprocess.run(
            [sys.executable, "-m", "shipsync_bench.bulk_bench", str(path), str(rows)], capture_output=True, text=True, check=True
        )
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    if figures["problems"]:
        raise RuntimeError(f"{figures['problems']} unexpected problems in the generated file, e.g. {figures['first_problem']}")
    read, floor = figures["read_seconds"], figures["calamine_seconds"]
    return [
        under(f"read {rows:,} x 8 XLSX (pandas, calamine engine; checked, typed, shaped)", read, "s", 3),
        BenchResult("the same file by python-calamine alone (the floor)", floor, "s", "read above", read, floor / read, "(context)", True),
        under(f"validate + diff of those {rows:,} rows", figures["plan_seconds"], "s", 3),
        under(f"read + validate + diff {rows:,} x 8 XLSX", figures["seconds"], "s", 3),
        under(f"peak RSS reading and validating {rows:,} x 8", figures["peak_rss_mb"], "MB", 1024),
    ]


def rerun_writes(rows: int = 10_000) -> list[BenchResult]:
    from shipsync.bulk.apply import apply_file
    from shipsync.config import load_settings
    from shipsync.pull.documents import pull_documents
    from shipsync.warehouse.analyst import read_only

    documents = int(rows * 1.25)  # about 0.86 containers per document in the sandbox
    with (
        tempfile.TemporaryDirectory(prefix="shipsync-bench-") as tmp,
        SandboxProcess("--rate-limit", "0", "--documents", str(documents), "--api-key", "sandbox-key-1") as sandbox,
    ):
        settings = load_settings(api_url=sandbox.api_url, api_key="sandbox-key-1", rate_limit="0", warehouse=Path(tmp) / "warehouse")
        pull_documents(settings, all_documents=True)
        with read_only(settings.lake) as con:
            numbers = [r[0] for r in con.execute(f"SELECT number FROM containers LIMIT {rows}").fetchall()]
        path = Path(tmp) / "po.csv"
        with path.open("w", newline="") as out:
            csv.writer(out).writerows([["container_number", "po_number"], *([n, f"PO-{i}"] for i, n in enumerate(numbers))])
        first = apply_file(settings, "custom-fields", path)
        before = sandbox.stats()
        again = apply_file(settings, "custom-fields", path)
        after = sandbox.stats()
    reads = int(after["admitted"]) - int(before["admitted"])  # type: ignore[call-overload]
    writes = again.writes + (reads - again.requests)
    return [
        BenchResult(
            f"write requests re-running an unchanged {len(numbers):,}-row file (first run wrote {first.writes:,})",
            float(writes),
            "requests",
            "-",
            None,
            None,
            "0",
            writes == 0,
        )
    ]


if __name__ == "__main__":
    print(json.dumps(validate_in_process(Path(sys.argv[1]), int(sys.argv[2]))))
