"""Recording a bulk run: `bulk_results` and before-images in the warehouse (committed with the run,
with the values written), and `NAME.EXT.results.csv` beside the input (created without following links,
every cell formula-safe and capped: `results_cells`)."""

from __future__ import annotations

import csv
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pyarrow as pa

from shipsync.bulk.cells import cell_text
from shipsync.bulk.kind import BulkKind
from shipsync.bulk.model import Change, Problem
from shipsync.bulk.reader import Sheet
from shipsync.bulk.readings import cell_note, change_detail
from shipsync.bulk.reflect import Reflection
from shipsync.bulk.results_cells import results_cell
from shipsync.errors import InputError
from shipsync.json_text import dumps
from shipsync.redaction import redact
from shipsync.safe_files import replacing_text
from shipsync.warehouse.unit_of_work import CommitContext, Warehouse

# Status of a row when its fields disagree: the worst one is shown.
SEVERITY = {"rejected": 6, "failed": 5, "unknown": 4, "skipped": 3, "applied": 2, "planned": 1, "unchanged": 0}


def result_rows(
    run_id: str,
    kind: str,
    source: tuple[str | None, str | None],
    changes: Sequence[Change],
    problems: Sequence[Problem],
    start_seq: int = 0,
) -> list[tuple[object, ...]]:
    """`bulk_results` rows of a run's problems and changes; `source`: the file and sheet it read."""
    now = datetime.now(UTC)
    file, sheet_name = source
    rows: list[tuple[object, ...]] = []
    for p in problems:
        rows.append((run_id, 0, file, sheet_name, p.row, kind, None, None, p.column, "skip", "rejected", redact(p.describe()), now))
    for c in changes:
        detail = redact(change_detail(c))
        rows.append((run_id, 0, file, sheet_name, c.row, kind, c.entity_type, c.entity_id, c.field, c.action, c.status, detail, now))
    return [(r[0], start_seq + i, *r[2:]) for i, r in enumerate(rows)]


# A write that may have reached the service: what undo may have to put back (it checks first).
MAY_HAVE_CHANGED = ("applied", "unknown")


def undo_rows(run_id: str, kind: str, changes: Sequence[Change], start_seq: int = 0) -> list[tuple[object, ...]]:
    """`bulk_undo` rows (before-images) of the writes among `changes` that may have changed the service."""
    written = [c for c in changes if c.status in MAY_HAVE_CHANGED and c.action != "skip"]
    return [
        (run_id, start_seq + i, kind, c.entity_type, c.entity_id, c.field, c.action, c.resource_id, dumps(c.before), dumps(c.after))
        for i, c in enumerate(written)
    ]


class ResultsLog:
    """A bulk run's `bulk_results` rows and before-images (`bulk_undo`, when `images`), staged in its
    warehouse as the run goes, with what the applied writes changed there (`reflect`): all committed
    with the run. `label` is what `bulk_results.kind` says: the kind's name, or `undo`."""

    def __init__(
        self, warehouse: Warehouse, run_id: str, kind: BulkKind, sheet: Sheet | None, *, label: str | None = None, images: bool = True
    ) -> None:
        self.warehouse = warehouse
        self.run_id = run_id
        self.kind = kind
        self.label = label or kind.name
        self.source = (str(sheet.file), sheet.sheet) if sheet else (None, None)
        self.images = images and kind.undoable
        self._results = 0
        self._undo = 0

    def store(self, changes: Sequence[Change], problems: Sequence[Problem]) -> None:
        """Results, before-images of what may have changed the service, and the written values."""
        rows = result_rows(self.run_id, self.label, self.source, changes, problems, self._results)
        self._results += len(rows)
        self.warehouse.append("bulk_results", _arrow(RESULT_COLUMNS, rows))
        if self.images:
            images = undo_rows(self.run_id, self.label, changes, self._undo)
            self._undo += len(images)
            if images:
                self.warehouse.append("bulk_undo", _arrow(UNDO_COLUMNS, images))
        reflect(self.warehouse, self.kind, [c for c in changes if c.status == "applied" and c.action != "skip"])

    def undone(self, undo_of: str, seqs: Sequence[int]) -> None:
        """The before-images `seqs` of run `undo_of` are settled by this run (put back, or already so)."""
        if not seqs:
            return
        run_id, settled = self.run_id, self.warehouse.stage("bulk_undo_settled", pa.table({"seq": pa.array(list(seqs), pa.int64())}))

        def mark(con: duckdb.DuckDBPyConnection, commit: CommitContext) -> None:
            con.execute(
                f"UPDATE bulk_undo SET undone_by = ? WHERE run_id = ? AND undone_by IS NULL AND seq IN (SELECT seq FROM {settled})",
                [run_id, undo_of],
            )

        self.warehouse.defer(["bulk_undo"], mark)


def store_recovered(warehouse: Warehouse, run_id: str, kind: str, source: tuple[str | None, str | None], changes: Sequence[Change]) -> None:
    """Stage the results and before-images of a run that stopped before its commit (from its journal)."""
    if changes:
        warehouse.append("bulk_results", _arrow(RESULT_COLUMNS, result_rows(run_id, kind, source, changes, [])))
    if images := undo_rows(run_id, kind, changes):
        warehouse.append("bulk_undo", _arrow(UNDO_COLUMNS, images))


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


DONE = ("applied", "planned")  # a cell that was written (or, in a dry run, would be)
NOT_DONE = ("rejected", "failed", "unknown", "skipped")


def row_outcomes(changes: Sequence[Change], problems: Sequence[Problem]) -> dict[int, tuple[str, str]]:
    """Each row's status and what happened to its cells. A row some of whose cells were written and
    some not is `partly applied` (or `partly planned`), naming the cells that were not; otherwise
    the row's status is its cells' (the worst, when they differ)."""
    cells: dict[int, list[tuple[str, str, str]]] = {}  # row -> (column, status, note)
    for p in problems:
        cells.setdefault(p.row, []).append((p.column, "rejected", f"{p.column}: {p.reason}"))
    for c in changes:
        cells.setdefault(c.row, []).append((c.field, c.status, cell_note(c) if c.action != "skip" or c.detail or c.says else ""))
    outcomes: dict[int, tuple[str, str]] = {}
    for row, found in cells.items():
        statuses = {status for _, status, _ in found}
        done = [s for s in DONE if s in statuses]
        missed = [column for column, status, _ in found if status in NOT_DONE]
        if done and missed:
            status = f"partly {done[0]}"
            prefix = f"not {done[0]}: {', '.join(dict.fromkeys(missed))}; "
        else:
            status = max(statuses, key=SEVERITY.__getitem__)
            prefix = ""
        outcomes[row] = (status, prefix + "; ".join(note for _, _, note in found if note))
    return outcomes


def row_counts(changes: Sequence[Change], problems: Sequence[Problem]) -> Counter[str]:
    """Rows by their status (as the results file shows them)."""
    return Counter(status for status, _ in row_outcomes(changes, problems).values())


@dataclass
class ProblemGroup:
    """One kind of problem (a status, a column, a reason with its values and numbers left out),
    how many cells have it, and the first few of them."""

    status: str
    column: str
    reason: str
    count: int = 0
    examples: list[str] = dataclass_field(default_factory=list)


def _kind_of(reason: str, value: str) -> str:
    shown = reason.replace(repr(value), "…").replace(value, "…") if value else reason
    return _ROW_NUMBERS.sub(r"\1 N", shown)


_ROW_NUMBERS = re.compile(r"\b(rows?) \d+")  # `set in row 2`, `set in row 3`: one kind of problem


def problem_groups(changes: Sequence[Change], problems: Sequence[Problem], first: int = 3) -> list[ProblemGroup]:
    """Rejected, failed and unknown cells by kind of problem, largest first, each with its first
    `first` cells: what a terminal shows instead of every one (the results file has them all)."""
    groups: dict[tuple[str, str, str], ProblemGroup] = {}

    def add(status: str, column: str, reason: str, value: str, example: str) -> None:
        key = (status, column, _kind_of(reason, value))
        group = groups.setdefault(key, ProblemGroup(*key))
        group.count += 1
        if len(group.examples) < first:
            group.examples.append(example)

    for p in problems:
        add("rejected", p.column, p.reason, cell_text(p.value), p.describe())
    for c in changes:
        if c.status in NOT_DONE:
            add(c.status, c.field, c.detail, "", f"row {c.row}, {c.field}: {c.detail}")
    return sorted(groups.values(), key=lambda g: -g.count)


def results_path(input_file: Path, run_kind: str) -> Path:
    """`NAME.EXT.RUN_KIND.results.csv` beside the input: `tags.xlsx` and `tags.csv` keep results of
    their own, and so does each kind of run of one file (a stop and a resume, a dry run and the run)."""
    return input_file.with_name(f"{input_file.name}.{run_kind}.results.csv")


def run_kind(kind: str, dry_run: bool) -> str:
    """What a results file's name says of its run: the kind, and whether it was a dry run."""
    return f"{kind}.dry-run" if dry_run else kind


def write_results_file(sheet: Sheet, changes: Sequence[Change], problems: Sequence[Problem], kind: str) -> Path:
    """`results_path` of the input for a run of `kind`: its rows plus `status` and `detail`,
    formula-safe, each cell capped; a link planted at that name is replaced, never followed."""
    target = results_path(sheet.file, kind)
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
