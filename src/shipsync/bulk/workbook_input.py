"""Reading an XLSX or ODS sheet with pandas through the calamine engine, cells kept typed.

A number cell arrives as a number, a boolean as a boolean, a date as a date and a date-time as a
date-time, never as their display text; text cells are stripped. The workbook is sized first
(`workbook_limits`): calamine allocates a sheet's whole rectangle and every expanded string before
anything can be checked, so a file that would expand too far is refused before it is opened.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime, time, timedelta
from pathlib import Path

import pandas as pd

from shipsync.bulk.cells import Cell
from shipsync.bulk.workbook_limits import check_workbook
from shipsync.errors import InputError

WORKBOOK_SUFFIXES = (".xlsx", ".xlsm", ".ods")


_KEPT = frozenset({bool, int, float})  # handed over as they are


def typed_cell(value: object) -> Cell:
    """One value as pandas hands it over, as a Cell (the rare kinds become text)."""
    if isinstance(value, datetime):
        if value.time() == time() and value.tzinfo is None:
            return value.date()  # a date cell: pandas turns dates into midnight date-times
        return value.to_pydatetime() if isinstance(value, pd.Timestamp) else value
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, bool | int | float | date):
        return value
    if isinstance(value, time):
        return value.isoformat()
    if isinstance(value, timedelta):
        return str(value)
    return "" if value is None or value is pd.NaT else str(value).strip()


# Why a sheet (its name, its first row) does not hold what the run reads; None when it does.
SheetFit = Callable[[str, list[Cell]], str | None]


def _header_row(book: pd.ExcelFile, name: str) -> list[Cell]:
    frame = pd.read_excel(book, sheet_name=name, header=None, nrows=1, dtype=object, na_filter=False)
    return [typed_cell(v) for v in frame.to_numpy().tolist()[0]] if len(frame) else []


def _chosen(file: Path, book: pd.ExcelFile, names: list[str], fits: SheetFit) -> tuple[str, str]:
    """The one sheet whose first row `fits`, and how it was chosen; InputError naming every
    sheet (and why it does not fit) when none or several do."""
    reasons = {name: fits(name, _header_row(book, name)) for name in names}
    fitting = [name for name, reason in reasons.items() if reason is None]
    if len(fitting) == 1:
        return fitting[0], f"the only one of its {len(names)} sheets ({', '.join(names)}) with a key column"
    if not fitting:
        why = "; ".join(f"{name!r}: {reason}" for name, reason in reasons.items())
        raise InputError(f"{file}: no sheet holds a spreadsheet of this kind ({why}); name the sheet with --sheet")
    raise InputError(f"{file}: sheets {', '.join(map(repr, fitting))} each hold a key column; name the one to read with --sheet")


def read_workbook_rows(file: Path, sheet: str | None, fits: SheetFit | None = None) -> tuple[str, list[list[Cell]], str]:
    """(sheet name, its rows from A1, header first, how the sheet was chosen): the named sheet;
    else the one whose first row `fits`, when the workbook has several (else the first)."""
    check_workbook(file)
    try:
        with pd.ExcelFile(file, engine="calamine") as book:
            names = [str(n) for n in book.sheet_names]
            if sheet is not None and sheet not in names:
                raise InputError(f"{file}: no sheet named {sheet!r} (sheets: {', '.join(names)})")
            if not names:
                raise InputError(f"{file}: the workbook has no sheets")
            if sheet is not None:
                name, how = sheet, "named by --sheet"
            elif len(names) == 1 or fits is None:
                name, how = names[0], "the workbook's only sheet" if len(names) == 1 else "the first sheet"
            else:
                name, how = _chosen(file, book, names, fits)
            frame = pd.read_excel(book, sheet_name=name, header=None, dtype=object, na_filter=False)
    except InputError:
        raise
    except Exception as exc:  # calamine and pandas raise many kinds for a broken file
        raise InputError(f"{file}: not a readable {file.suffix.lstrip('.').upper()} workbook ({type(exc).__name__})") from None
    rows = frame.to_numpy().tolist()
    del frame
    # Per cell, the common kinds are handled inline: a function call each would cost more than the rest.
    return name, [[v.strip() if type(v) is str else v if type(v) in _KEPT else typed_cell(v) for v in row] for row in rows], how
