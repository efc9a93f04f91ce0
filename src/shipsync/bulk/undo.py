"""`shipsync apply undo RUN_ID`: put back what a run changed, newest first; itself a recorded run.

The run's before-images (`bulk_undo`) are read here, with those of runs that stopped before their
commit folded in from their journals first (`journal`). The kind that made them reads what it
needs of the service's present (`BulkKind.undo_refresh`), judges each image against it
(`BulkKind.reverse`, by the rules of `present`: put back, already as before, or changed since and
left alone), writes the reversal and reflects it, as it does its own edits. An image put back or
found as before is marked undone; one left alone stays, so a later undo of the run tries it again.
Every image's outcome is in `bulk_results` and in a results file beside the file the run read.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import duckdb

from shipsync.bulk.apply import ApplyReport
from shipsync.bulk.execute import execute
from shipsync.bulk.journal import Recovered, journal_folder, recover
from shipsync.bulk.kinds import kind_for
from shipsync.bulk.model import WRITE_ACTIONS, Change, UndoImage
from shipsync.bulk.present import shown
from shipsync.bulk.progress import RequestBudget, Stage, no_progress
from shipsync.bulk.record import ResultsLog, results_path
from shipsync.bulk.refresh import refreshed_knowledge
from shipsync.bulk.results_cells import results_cell
from shipsync.config import Settings
from shipsync.errors import InputError
from shipsync.json_text import loads
from shipsync.redaction import redact
from shipsync.safe_files import replacing_text
from shipsync.warehouse.ledger import warehouse_run

COLUMNS = ["seq", "kind", "entity_type", "entity_id", "field", "action", "resource_id", "before", "after", "undone_by"]
SETTLED = ("applied", "unchanged")  # an image put back, or found as it was before the run


@dataclass(frozen=True)
class UndoneRun:
    """The run an undo puts back: its kind, the file it read, and its images still to undo, newest first."""

    kind: str
    file: str | None
    images: list[UndoImage]


def _load(con: duckdb.DuckDBPyConnection, run_id: str) -> UndoneRun:
    """The run's kind, file and before-images, newest first, less those already undone."""
    rows = con.execute(f"SELECT {', '.join(COLUMNS)} FROM bulk_undo WHERE run_id = ? ORDER BY seq DESC", [run_id]).fetchall()
    if not rows:
        raise InputError(f"run {run_id} changed nothing that can be undone (or is not a bulk apply run)")
    records = [dict(zip(COLUMNS, r, strict=True)) for r in rows]
    if all(r["undone_by"] for r in records):
        raise InputError(f"run {run_id} was already undone by run {records[0]['undone_by']}")
    images = [
        UndoImage(
            r["seq"], r["entity_type"], r["entity_id"], r["field"], r["action"], r["resource_id"], loads(r["before"]), loads(r["after"])
        )
        for r in records
        if not r["undone_by"]
    ]
    file = con.execute("SELECT any_value(file) FROM bulk_results WHERE run_id = ?", [run_id]).fetchone()
    return UndoneRun(str(records[0]["kind"]), file[0] if file else None, images)


def undo_run(settings: Settings, run_id: str, *, progress: Stage = no_progress) -> ApplyReport:
    settings.require_api_key()
    if not settings.lake.exists():
        raise InputError(f"no warehouse at {settings.lake.describe()}: nothing to undo")
    recovered = Recovered()
    try:
        parameters = {"undo_of": run_id}
        with warehouse_run(settings.lake, "apply_undo", parameters, flow_run_id=settings.flow_run_id) as run:
            recovered = recover(run, journal_folder(settings))
            with run.warehouse.preview():  # the images folded in just now are staged, not committed
                undone = _load(run.con, run_id)
            kind = kind_for(undone.kind)
            with run.step("apply_undo", parameters) as record:
                run.records.extend(recovered.ledger)
                rounds = lambda con, known, n: kind.undo_refresh(undone.images, known, n)  # noqa: E731
                known = refreshed_knowledge(settings, run, record, kind.scope, rounds, progress)
                changes = kind.reverse(undone.images, known)
                writes = sum(1 for c in changes if c.action in WRITE_ACTIONS)
                with progress(f"undoing {writes:,} changes", writes, RequestBudget(settings.rate)) as advance:
                    record.add_stats(execute(settings, kind, changes, on_written=advance))
                results = ResultsLog(run.warehouse, record.run_id, kind, None, label="undo", images=False)
                results.store(changes, [])
                results.undone(run_id, [undone.images[c.row - 1].seq for c in changes if c.status in SETTLED])
                record.errors.extend(f"{c.entity_id} {c.field}: {c.status} {c.detail}" for c in changes if c.status not in SETTLED)
                report = ApplyReport(record.run_id, "undo", Path(run_id), False, None, changes, [], record.stats.requests, recovered.runs)
                report.results_file = write_undo_results(undo_results_path(undone, run_id), undone.images, changes)
        recovered.remove()
    finally:
        recovered.close()
    return report


def undo_results_path(undone: UndoneRun, run_id: str) -> Path:
    """`NAME.EXT.KIND.undo.results.csv` beside the file the undone run read (here, when that folder
    is gone or the run read none)."""
    if undone.file:
        source = Path(undone.file)
        named = results_path(source, f"{undone.kind}.undo")
        return named if source.parent.is_dir() else Path(named.name)
    return Path(f"undo-{run_id}.results.csv")


UNDO_RESULT_HEADERS = ["image", "entity_type", "entity_id", "field", "the run left", "now", "put back", "status", "detail"]


def write_undo_results(target: Path, images: Sequence[UndoImage], changes: Sequence[Change]) -> Path:
    """One line per before-image: what the run left, what the service has now, what was put back
    and how it ended; formula-safe, a link planted at the name replaced, never followed."""
    try:
        with replacing_text(target, newline="", encoding="utf-8-sig") as out:
            writer = csv.writer(out)
            writer.writerow(UNDO_RESULT_HEADERS)
            for change in changes:
                image = images[change.row - 1]
                put_back = shown(change.after) if change.action in WRITE_ACTIONS else ""
                cells = [
                    str(change.row),
                    image.entity_type,
                    image.entity_id,
                    image.field,
                    shown(image.after),
                    shown(change.before),
                    put_back,
                ]
                writer.writerow([results_cell(redact(c)) for c in [*cells, change.status, change.detail]])
    except OSError as exc:
        raise InputError(f"{target}: cannot write the results file ({exc.strerror or exc})") from None
    return target
