"""Recording a bulk run: `bulk_results` and before-images in the warehouse (committed with the run,
with the values written), and `NAME.results.csv` beside the input (created without following links,
every cell formula-safe and capped: `results_cells`)."""

from __future__ import annotations

import csv
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pyarrow as pa

from shipsync.bulk.cells import cell_text
from shipsync.bulk.kind import BulkKind
from shipsync.bulk.model import Change, Problem
from shipsync.bulk.reader import Sheet
from shipsync.bulk.reflect import Reflection
from shipsync.bulk.results_cells import results_cell
from shipsync.errors import InputError
from shipsync.json_text import dumps
from shipsync.redaction import redact
from shipsync.safe_files import replacing_text
from shipsync.warehouse.unit_of_work import CommitContext, Warehouse

# Status of a row when its fields disagree: the worst one is shown.
SEVERITY = {"rejected": 5, "failed": 4, "unknown": 3, "applied": 2, "planned": 1, "unchanged": 0}


def result_rows(
    run_id: str,
    kind: str,
    sheet: Sheet | None,
    changes: Sequence[Change],
    problems: Sequence[Problem],
    start_seq: int = 0,
) -> list[tuple[object, ...]]:
    now = datetime.now(UTC)
    file = str(sheet.file) if sheet else None
    sheet_name = sheet.sheet if sheet else None
    rows: list[tuple[object, ...]] = []
    for p in problems:
        rows.append(
            (
                run_id,
                0,
                file,
                sheet_name,
                p.row,
                kind,
                None,
                None,
                p.column,
                "skip",
                "rejected",
                redact(p.describe()),
                now,
            )
        )
    for c in changes:
        rows.append(
            (
                run_id,
                0,
                file,
                sheet_name,
                c.row,
                kind,
                c.entity_type,
                c.entity_id,
                c.field,
                c.action,
                c.status,
                redact(c.detail),
                now,
            )
        )
    return [(r[0], start_seq + i, *r[2:]) for i, r in enumerate(rows)]


class ResultsLog:
    """A bulk run's `bulk_results` rows and before-images (`bulk_undo`), staged in its warehouse as
    the run goes, with what the applied writes changed there (`reflect`): all committed with the run.
    `label` is what `bulk_results.kind` says: the kind's name, or `undo`."""

    def __init__(self, warehouse: Warehouse, run_id: str, kind: BulkKind, sheet: Sheet | None, label: str | None = None) -> None:
        self.warehouse = warehouse
        self.run_id = run_id
        self.kind = kind
        self.label = label or kind.name
        self.sheet = sheet
        self._results = 0
        self._undo = 0

    def store(self, changes: Sequence[Change], problems: Sequence[Problem], *, undo_of: str | None = None) -> None:
        """Results, before-images of what was applied, and the written values."""
        applied = [c for c in changes if c.status == "applied" and c.action != "skip"]
        rows = result_rows(self.run_id, self.label, self.sheet, changes, problems, self._results)
        self._results += len(rows)
        self.warehouse.append("bulk_results", _arrow(RESULT_COLUMNS, rows))
        if undo_of is None and applied and self.kind.undoable:
            images = [
                (
                    self.run_id,
                    self._undo + i,
                    self.label,
                    c.entity_type,
                    c.entity_id,
                    c.field,
                    c.action,
                    c.resource_id,
                    dumps(c.before),
                    dumps(c.after),
                )
                for i, c in enumerate(applied)
            ]
            self._undo += len(images)
            self.warehouse.append("bulk_undo", _arrow(UNDO_COLUMNS, images))
        if undo_of is not None:
            run_id = self.run_id

            def undone(con: duckdb.DuckDBPyConnection, commit: CommitContext) -> None:
                con.execute("UPDATE bulk_undo SET undone_by = ? WHERE run_id = ? AND undone_by IS NULL", [run_id, undo_of])

            self.warehouse.defer(["bulk_undo"], undone)
        reflect(self.warehouse, self.kind, applied)


def reflect(warehouse: Warehouse, kind: BulkKind, applied: Sequence[Change]) -> None:
    """Stage what `applied` (writes of `kind` the service accepted) changed in the warehouse."""
    if not applied:
        return
    reflection = Reflection()
    kind.reflect(applied, reflection)
    reflection.stage(warehouse)


RESULT_COLUMNS = (
    *("run_id", "seq", "file", "sheet", "row_number", "kind", "entity_type", "entity_id", "field", "action", "status", "detail"),
    "recorded_at",
)
UNDO_COLUMNS = ("run_id", "seq", "kind", "entity_type", "entity_id", "field", "action", "resource_id", "before", "after")
_INTEGERS = frozenset({"seq", "row_number"})


def _arrow(names: Sequence[str], rows: Sequence[Sequence[object]]) -> pa.Table:
    """Rows (tuples in `names` order) as one Arrow batch; JSON columns travel as text."""
    columns = list(zip(*rows, strict=True)) if rows else [() for _ in names]
    return pa.table(
        {name: pa.array(list(values), pa.int64() if name in _INTEGERS else None) for name, values in zip(names, columns, strict=True)}
    )


def row_outcomes(changes: Sequence[Change], problems: Sequence[Problem]) -> dict[int, tuple[str, str]]:
    outcomes: dict[int, tuple[str, list[str]]] = {}
    for p in problems:
        status, details = outcomes.get(p.row, ("unchanged", []))
        outcomes[p.row] = ("rejected", [*details, f"{p.column}: {p.reason}"])
    for c in changes:
        status, details = outcomes.get(c.row, ("unchanged", []))
        if SEVERITY[c.status] > SEVERITY[status]:
            status = c.status
        note = f"{c.field}: {c.action} {c.status}" + (f" ({c.detail})" if c.detail else "")
        outcomes[c.row] = (status, [*details, note] if c.action != "skip" or c.detail else details)
    return {row: (status, "; ".join(details)) for row, (status, details) in outcomes.items()}


def write_results_file(sheet: Sheet, changes: Sequence[Change], problems: Sequence[Problem]) -> Path:
    """NAME.results.csv beside the input: its rows plus `status` and `detail`, formula-safe, each
    cell capped; a link planted at that name is replaced, never followed."""
    target = sheet.file.with_name(f"{sheet.file.stem}.results.csv")
    outcomes = row_outcomes(changes, problems)
    try:
        with replacing_text(target, newline="", encoding="utf-8-sig") as out:
            writer = csv.writer(out)
            writer.writerow([results_cell(h) for h in [*sheet.original_headers, "status", "detail"]])
            for cells, number in zip(sheet.rows, sheet.row_numbers, strict=True):
                status, detail = outcomes.get(number, ("unchanged", ""))
                writer.writerow([*(results_cell(cell_text(c)) for c in cells), status, results_cell(redact(detail))])
    except OSError as exc:
        raise InputError(f"{target}: cannot write the results file ({exc.strerror or exc})") from None
    return target


def summary(changes: Sequence[Change], problems: Sequence[Problem]) -> Counter[str]:
    counts: Counter[str] = Counter(c.status for c in changes)
    counts["rejected"] += len(problems)
    return counts
