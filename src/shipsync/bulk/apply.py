"""`shipsync apply KIND FILE`: read, check the header, refresh, validate, diff, write, record.

Each kind is a `BulkKind` (see `kind.py`); this module runs any of them the same way. Nothing is
sent before the whole file has been validated; a bad header rejects the file before anything is
written. The run is one snapshot: its refresh, results, before-images and what the writes changed
are committed together when it ends. Before each chunk of writes is sent, their before-images are
on disk in the run's journal (`journal`): a run stopped mid-way (a crash, a kill) commits nothing,
and the next bulk run or undo folds its journal into the lake, so what it sent can be undone; a
re-run (which re-reads the service first) sends only the rest.
"""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from shipsync.bulk.execute import execute
from shipsync.bulk.journal import JournalHeader, Recovered, RecoveredRun, WriteJournal, journal_folder, recover
from shipsync.bulk.kind import BulkKind
from shipsync.bulk.kinds import kind_for
from shipsync.bulk.lookup import Knowledge
from shipsync.bulk.model import WRITE_ACTIONS, Change, Problem, apply_flow
from shipsync.bulk.progress import RequestBudget, Stage, no_progress, reporting_rows
from shipsync.bulk.reader import Sheet, read_sheet
from shipsync.bulk.record import ResultsLog, row_counts, run_kind, summary, write_results_file
from shipsync.bulk.refresh import refreshed_knowledge
from shipsync.config import Settings
from shipsync.warehouse.ledger import warehouse_run

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
    recovered: list[RecoveredRun] = field(default_factory=list)  # runs stopped before their commit, folded into this one
    sheet: tuple[str, str] | None = None  # a workbook's sheet that was read, and how it was chosen

    @property
    def counts(self) -> Counter[str]:
        """Cells (changes and problems) by status."""
        return summary(self.changes, self.problems)

    @property
    def row_counts(self) -> Counter[str]:
        """Rows by status, as the results file shows them (a row holds one change per cell)."""
        return row_counts(self.changes, self.problems)

    @property
    def writes(self) -> int:
        return sum(1 for c in self.changes if c.action in WRITE_ACTIONS)


def plan_without_gc_pauses(kind: BulkKind, table: Sheet, known: Knowledge, clear_empty: bool) -> tuple[list[Change], list[Problem]]:
    """Plan with the cyclic garbage collector paused: a big file allocates a million small objects
    that form no cycles, and the collector's repeated passes over them are a large share of the
    time, and find nothing."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        changes, problems = kind.plan(table, known, clear_empty=clear_empty)
    finally:
        if enabled:
            gc.enable()
    return changes, problems


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
    notice: Callable[[str], None] = lambda text: None,
    progress: Stage = no_progress,
) -> ApplyReport:
    """Apply `path` as a spreadsheet of `kind` (see the module's docstring); `notice` hears, once
    the first write is about to be sent, the run's id and how to undo it."""
    bulk_kind = kind_for(kind)
    settings.require_api_key()
    with progress(f"reading {path.name}", None) as advance:
        table = read_sheet(path, sheet=sheet, encoding=encoding, delimiter=delimiter, on_rows=advance, fits=bulk_kind.check_structure)
    bulk_kind.check_structure(table)
    params = {"file": str(path), "sheet": table.sheet, "kind": kind, "dry_run": dry_run, "rows": len(table.rows)}
    flow = apply_flow(bulk_kind.name)
    folder = journal_folder(settings)
    recovered, journal = Recovered(), None
    try:
        with warehouse_run(settings.lake, flow, params, flow_run_id=settings.flow_run_id) as run, run.step(flow, params) as record:
            recovered = recover(run, folder)
            run.records.extend(recovered.ledger)
            rounds = lambda con, known, n: bulk_kind.refresh_request(con, table, known, n)  # noqa: E731
            known = refreshed_knowledge(settings, run, record, bulk_kind.scope, rounds, progress)
            bulk_kind.check_headers(table, known)
            with progress("checking rows", len(table.rows)) as advance:
                changes, problems = plan_without_gc_pauses(bulk_kind, reporting_rows(table, advance), known, clear_empty)
            report = ApplyReport(record.run_id, kind, path, dry_run, None, changes, problems, recovered=recovered.runs)
            report.sheet = (table.sheet, table.chosen) if table.sheet is not None else None
            results = ResultsLog(run.warehouse, record.run_id, bulk_kind, table)
            results.store([c for c in changes if c.action == "skip"], problems)
            pending = [c for c in changes if c.action != "skip"]
            if dry_run:
                results.store(pending, [])
            elif pending:
                if bulk_kind.undoable:
                    journal = WriteJournal(folder, JournalHeader(record.run_id, kind, str(path), table.sheet, dict(params)))
                    notice(
                        f"run {record.run_id} sends {len(pending):,} changes: `shipsync apply undo {record.run_id}` puts back what it sent"
                    )
                with progress(f"writing {len(pending):,} changes", len(pending), RequestBudget(settings.rate)) as advance:
                    for start in range(0, len(pending), WRITE_CHUNK):
                        chunk = pending[start : start + WRITE_CHUNK]
                        if journal is not None:
                            journal.intend(chunk)
                        record.add_stats(execute(settings, bulk_kind, chunk, on_written=advance))
                        if journal is not None:
                            journal.settle(chunk)
                        results.store(chunk, [])
                        if on_chunk:
                            on_chunk(len(chunk))
            report.requests = record.stats.requests
            record.errors.extend(p.describe() for p in problems[:100])
            record.errors.extend(f"row {c.row} {c.field}: {c.status} {c.detail}" for c in changes if c.status in ("failed", "unknown"))
            report.results_file = write_results_file(table, changes, problems, run_kind(kind, dry_run))
        # Committed: the lake holds what the journals held.
        if journal is not None:
            journal.remove()
        recovered.remove()
    finally:
        if journal is not None:
            journal.close()
        recovered.close()
    return report
