"""`shipsync apply undo RUN_ID`: put back what a run changed, newest first; itself a recorded run.

The run's before-images (`bulk_undo`) are read here; the kind that made them says how each is
reversed (`BulkKind.reverse`), writes the reversal and reflects it, as it does its own edits.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from shipsync.bulk.apply import ApplyReport
from shipsync.bulk.execute import execute
from shipsync.bulk.kinds import kind_for
from shipsync.bulk.model import WRITE_ACTIONS, UndoImage
from shipsync.bulk.progress import RequestBudget, Stage, no_progress
from shipsync.bulk.record import ResultsLog
from shipsync.config import Settings
from shipsync.errors import InputError
from shipsync.json_text import loads
from shipsync.warehouse.ledger import warehouse_run

COLUMNS = ["seq", "kind", "entity_type", "entity_id", "field", "action", "resource_id", "before", "after", "undone_by"]


def _load(con: duckdb.DuckDBPyConnection, run_id: str) -> tuple[str, list[UndoImage]]:
    """The run's kind and its before-images, newest first, less those already undone."""
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
    return str(records[0]["kind"]), images


def undo_run(settings: Settings, run_id: str, *, progress: Stage = no_progress) -> ApplyReport:
    settings.require_api_key()
    if not settings.lake.exists():
        raise InputError(f"no warehouse at {settings.lake.describe()}: nothing to undo")
    with warehouse_run(settings.lake, "apply_undo", {"undo_of": run_id}, flow_run_id=settings.flow_run_id) as run:
        kind_name, images = _load(run.con, run_id)
        kind = kind_for(kind_name)
        with run.step("apply_undo", {"undo_of": run_id}) as record:
            changes = kind.reverse(images, run.con)
            writes = sum(1 for c in changes if c.action in WRITE_ACTIONS)
            with progress(f"undoing {writes:,} changes", writes, RequestBudget(settings.rate)) as advance:
                record.add_stats(execute(settings, kind, changes, on_written=advance))
            ResultsLog(run.warehouse, record.run_id, kind, None, label="undo").store(changes, [], undo_of=run_id)
            record.errors.extend(f"{c.entity_id} {c.field}: {c.status} {c.detail}" for c in changes if c.status != "applied")
        return ApplyReport(record.run_id, "undo", Path(run_id), False, None, changes, [], record.stats.requests)
