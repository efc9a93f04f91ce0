"""Reading an XLSX or ODS sheet with pandas through the calamine engine, cells kept typed.

A number cell arrives as a number, a boolean as a boolean, a date as a date and a date-time as a
date-time, never as their display text; text cells are stripped. The workbook is measured first
(`workbook_limits`): calamine allocates a sheet's whole rectangle and every expanded string before
anything can be checked, so a file that would expand too far is refused before it is opened.
"""

from __future__ import annotations

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


def read_workbook_rows(file: Path, sheet: str | None) -> tuple[str, list[list[Cell]]]:
    """(sheet name, its rows from A1, header first): the named sheet or the first one."""
    check_workbook(file)
    try:
        with pd.ExcelFile(file, engine="calamine") as book:
            names = [str(n) for n in book.sheet_names]
            if sheet is not None and sheet not in names:
                raise InputError(f"{file}: no sheet named {sheet!r} (sheets: {', '.join(names)})")
            if not names:
                raise InputError(f"{file}: the workbook has no sheets")
            name = sheet if sheet is not None else names[0]
            frame = pd.read_excel(book, sheet_name=name, header=None, dtype=object, na_filter=False)
    except InputError:
        raise
    except Exception as exc:  # calamine and pandas raise many kinds for a broken file
        raise InputError(f"{file}: not a readable {file.suffix.lstrip('.').upper()} workbook ({type(exc).__name__})") from None
    rows = frame.to_numpy().tolist()
    del frame
    # Per cell, the common kinds are handled inline: a function call each would cost more than the rest.
    return name, [[v.strip() if type(v) is str else v if type(v) in _KEPT else typed_cell(v) for v in row] for row in rows]
