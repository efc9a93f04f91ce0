"""`shipsync apply KIND FILE`: read, check the header, refresh, validate, diff, write, record.

Nothing is sent before the whole file has been validated; a bad header rejects the file before
anything is written. Writes go out in chunks, each recorded before the next, so an interrupted
run keeps what it did and a re-run (which re-reads the service first) finishes the rest.
"""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from types import ModuleType

from shipsync.bulk import plan_custom_fields, plan_definitions, plan_tracking
from shipsync.bulk.execute import WRITE_ACTIONS, execute
from shipsync.bulk.lookup import Knowledge, read_knowledge
from shipsync.bulk.model import Change, Problem
from shipsync.bulk.progress import Stage, no_progress, reporting_rows
from shipsync.bulk.reader import Sheet, read_sheet
from shipsync.bulk.record import store, summary, write_results_file
from shipsync.bulk.refresh import definitions_fresh, refresh
from shipsync.config import Settings
from shipsync.errors import InputError
from shipsync.pull.run import ledger_run
from shipsync.warehouse.ledger import last_success

KINDS: dict[str, ModuleType] = {
    "tracking-requests": plan_tracking,
    "custom-field-definitions": plan_definitions,
    "custom-fields": plan_custom_fields,
}
WRITE_CHUNK = 500


@dataclass
class ApplyReport:
    run_id: str
    kind: str
    file: Path
    dry_run: bool
    results_file: Path | None
    changes: list[Change] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    requests: int = 0

    @property
    def counts(self) -> Counter[str]:
        return summary(self.changes, self.problems)

    @property
    def writes(self) -> int:
        return sum(1 for c in self.changes if c.action in WRITE_ACTIONS)


def plan_without_gc_pauses(planner: ModuleType, table: Sheet, known: Knowledge, clear_empty: bool) -> tuple[list[Change], list[Problem]]:
    """Plan with the cyclic garbage collector paused: a big file allocates a million small objects
    that form no cycles, and the collector's repeated passes over them cost a third of the time."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        changes, problems = planner.plan(table, known, clear_empty=clear_empty)
    finally:
        if enabled:
            gc.enable()
    return changes, problems


def _structure(kind: str, sheet: Sheet) -> None:
    """Header checks that need no service data: key columns, allowed columns."""
    if kind == "custom-fields":
        plan_custom_fields.layout_of(sheet)
    elif kind == "tracking-requests":
        plan_tracking.check_headers(sheet, Knowledge())
    else:
        plan_definitions.check_headers(sheet, Knowledge())


def _tracking_since(settings: Settings) -> str | None:
    last = max(
        (
            t
            for t in (
                last_success(settings.warehouse, "pull_tracking_requests"),
                last_success(settings.warehouse, "apply_tracking-requests"),
            )
            if t
        ),
        default=None,
    )
    return (last - timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M:%SZ") if last else None


def apply_file(
    settings: Settings,
    kind: str,
    path: Path,
    *,
    dry_run: bool = False,
    sheet: str | None = None,
    encoding: str | None = None,
    delimiter: str | None = None,
    clear_empty: bool = False,
    on_chunk: Callable[[int], None] | None = None,
    progress: Stage = no_progress,
) -> ApplyReport:
    if kind not in KINDS:
        raise InputError(f"unknown kind {kind!r}: use one of {', '.join(KINDS)}")
    planner = KINDS[kind]
    settings.require_api_key()
    with progress(f"reading {path.name}", None) as advance:
        table = read_sheet(path, sheet=sheet, encoding=encoding, delimiter=delimiter, on_rows=advance)
    _structure(kind, table)
    params = {"file": str(path), "sheet": table.sheet, "kind": kind, "dry_run": dry_run, "rows": len(table.rows)}
    with ledger_run(settings, f"apply_{kind}", params) as record:
        known = read_knowledge(settings.warehouse, entities=kind == "custom-fields", tracking=kind == "tracking-requests")
        stale = kind != "tracking-requests" and (
            kind == "custom-field-definitions"
            or not definitions_fresh(settings.warehouse)
            or (kind == "custom-fields" and bool(plan_custom_fields.unknown_slugs(table, known)))
        )
        record.add_stats(
            refresh(
                settings,
                record.run_id,
                definitions=stale,
                custom_fields=kind == "custom-fields",
                tracking_requests=kind == "tracking-requests",
                tracking_since=_tracking_since(settings) if kind == "tracking-requests" else None,
                request_numbers=plan_tracking.request_numbers_to_resolve(table, known) if kind == "tracking-requests" else (),
            )
        )
        known = read_knowledge(settings.warehouse, entities=kind == "custom-fields", tracking=kind == "tracking-requests")
        planner.check_headers(table, known)
        with progress("checking rows", len(table.rows)) as advance:
            changes, problems = plan_without_gc_pauses(planner, reporting_rows(table, advance), known, clear_empty)
        report = ApplyReport(record.run_id, kind, path, dry_run, None, changes, problems)
        store(settings.warehouse, record.run_id, kind, table, [c for c in changes if c.action == "skip"], problems)
        pending = [c for c in changes if c.action != "skip"]
        if dry_run:
            store(settings.warehouse, record.run_id, kind, table, pending, [])
        else:
            for start in range(0, len(pending), WRITE_CHUNK):
                chunk = pending[start : start + WRITE_CHUNK]
                record.add_stats(execute(settings, chunk))
                store(settings.warehouse, record.run_id, kind, table, chunk, [])
                if on_chunk:
                    on_chunk(len(chunk))
        report.requests = record.stats.requests
        record.errors.extend(p.describe() for p in problems[:100])
        record.errors.extend(f"row {c.row} {c.field}: {c.status} {c.detail}" for c in changes if c.status in ("failed", "unknown"))
        report.results_file = write_results_file(table, changes, problems)
    return report
