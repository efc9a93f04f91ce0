"""Reading spreadsheets into a Sheet: a CSV, or the first (or named) sheet of an XLSX or ODS workbook.

A CSV is read row by row (`csv_input`), a workbook with pandas (`workbook_input`), each within the
bounds of `intake_limits`; here the table gets its shape. Headers match case- and
space-insensitively (`Container Number` is `container_number`); blank rows are skipped, short rows
padded, long ones reported. Every problem names the file, and the row or column where it is.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from shipsync.bulk.cells import Cell, cell_text
from shipsync.bulk.csv_input import read_csv_rows
from shipsync.bulk.workbook_input import WORKBOOK_SUFFIXES, read_workbook_rows
from shipsync.errors import InputError

PROGRESS_ROWS = 10_000  # rows shaped between two progress reports


@dataclass
class Sheet:
    """A table read from a file: normalized headers and the cells of each row."""

    file: Path
    sheet: str | None
    headers: list[str]  # normalized
    original_headers: list[str]
    rows: list[list[Cell]]  # padded to the header width with ""; CSV cells are always text
    row_numbers: list[int]  # as a spreadsheet user counts them (header is row 1)
    ragged: dict[int, str]  # row number -> problem with its shape
    chosen: str = ""  # how a workbook's sheet was chosen (`named by --sheet`, `the only one ... with a key column`)


def normalize_header(text: str) -> str:
    return re.sub(r"[\s\-]+", "_", text.strip().lower()).strip("_")


def _headers(file: Path, header: list[Cell]) -> tuple[list[str], list[str]]:
    original = [cell_text(h).strip() for h in header]
    while original and not original[-1]:
        original.pop()
    if not any(original):
        raise InputError(f"{file}: the first row must hold the column headers, and it is empty")
    normalized = [normalize_header(h) for h in original]
    for index, name in enumerate(normalized):
        if not name:
            raise InputError(f"{file}: column {index + 1} has no header")
        if normalized.index(name) != index:
            raise InputError(f"{file}: duplicate column {original[index]!r} (columns {normalized.index(name) + 1} and {index + 1})")
    return original, normalized


def _shape(body: list[list[Cell]], width: int, on_rows: Callable[[int], None]) -> tuple[list[list[Cell]], list[int], dict[int, str]]:
    rows: list[list[Cell]] = []
    numbers: list[int] = []
    ragged: dict[int, str] = {}
    padding: list[Cell] = [""] * width
    for offset, cells in enumerate(body):
        if offset % PROGRESS_ROWS == PROGRESS_ROWS - 1:
            on_rows(PROGRESS_ROWS)
        # Emptiness is "" and nothing else: a 0 or FALSE cell is a value.
        if cells.count("") == len(cells):
            continue  # blank lines between blocks are common in spreadsheets
        number = offset + 2
        if len(cells) > width:
            extra = cells[width:]
            if extra.count("") != len(extra):
                filled = len(cells) - next(i for i, c in enumerate(reversed(cells)) if c != "")
                ragged[number] = f"{filled} cells but {width} columns"
            cells = cells[:width]
        elif len(cells) < width:
            cells = cells + padding[len(cells) :]
        rows.append(cells)
        numbers.append(number)
    on_rows(len(body) % PROGRESS_ROWS)
    return rows, numbers, ragged


# Whether a table's header (a Sheet without rows) holds what the run reads: InputError if not.
Fits = Callable[["Sheet"], None]


def read_sheet(
    file: Path,
    *,
    sheet: str | None = None,
    encoding: str | None = None,
    delimiter: str | None = None,
    on_rows: Callable[[int], None] | None = None,
    fits: Fits | None = None,
) -> Sheet:
    """Read a CSV, XLSX or ODS file into a Sheet; raises InputError naming the file on anything
    unusable. `on_rows(n)` hears of the rows shaped, in steps of PROGRESS_ROWS. Of a workbook's
    sheets, `sheet` names one; else the one whose header `fits` is read (when several sheets
    fit, or none, the error names them all)."""
    if not file.exists():
        raise InputError(f"{file}: no such file")
    with _gc_paused():
        return _read(file, sheet, encoding, delimiter, on_rows or (lambda _: None), fits)


def _sheet_fit(file: Path, fits: Fits) -> Callable[[str, list[Cell]], str | None]:
    """A workbook sheet's first row judged by `fits`: why it does not fit, or None."""

    def reason(name: str, header: list[Cell]) -> str | None:
        try:
            original, normalized = _headers(file, header)
            fits(Sheet(file, name, normalized, original, [], [], {}))
        except InputError as exc:
            return str(exc).removeprefix(f"{file}: ")
        return None

    return reason


@contextmanager
def _gc_paused() -> Iterator[None]:
    """A big file is a million small objects that form no cycles: the cyclic collector's repeated
    passes over them are a share of the read, and find nothing."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _read(
    file: Path, sheet: str | None, encoding: str | None, delimiter: str | None, on_rows: Callable[[int], None], fits: Fits | None
) -> Sheet:
    sheet_name: str | None = None
    chosen = ""
    table: list[list[Cell]]
    if file.suffix.lower() in WORKBOOK_SUFFIXES:
        sheet_name, table, chosen = read_workbook_rows(file, sheet, _sheet_fit(file, fits) if fits else None)
        if not table:
            raise InputError(f"{file}: sheet {sheet_name!r} is empty")
    else:
        table = cast(list[list[Cell]], read_csv_rows(file, encoding=encoding, delimiter=delimiter))
    original, normalized = _headers(file, table[0])
    width = len(normalized)
    body = table[1:]
    del table
    rows, numbers, ragged = _shape(body, width, on_rows)
    return Sheet(file, sheet_name, normalized, original, rows, numbers, ragged, chosen)
