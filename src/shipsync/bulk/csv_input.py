"""Reading a CSV row by row: any common encoding and delimiter, every cell kept as the text typed,
the bounds of `intake_limits` checked as each row arrives.

Cells stay text (`NA`, `null`, `0012` and `1e5` are what the user wrote; the field's converter
decides what they mean). Rows may be ragged: each keeps the cells it has, and the caller pads the
short ones and reports the long ones.

The file is read with Python's csv module (its parser is C), one row at a time, so nothing is
built for a row before its width is known: a line is refused before it is split when its
delimiters alone pass MAX_COLUMNS (a line of commas would otherwise be a cell per byte), a row
when its cells do, and the file when its rows, each counted at least as wide as the header, pass
MAX_CELLS. Not pandas: it pads every row to the widest line and pays per column, so one wide line
among short ones costs it the whole file's width in every row before any bound is checked.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path

from shipsync.bulk.intake_limits import MAX_CELLS, MAX_COLUMNS, MAX_TEXT_BYTES, check_text_size, too_many_cells, too_wide
from shipsync.errors import InputError

# The csv module refuses a cell over 131,072 characters by default. One cell may hold as much as
# the file does (MAX_TEXT_BYTES bounds that; the results file cuts what it shows): the limit is
# process-wide, so it is only ever raised.
csv.field_size_limit(max(csv.field_size_limit(), MAX_TEXT_BYTES))


def decode(raw: bytes, file: Path, encoding: str | None) -> str:
    if encoding:
        try:
            return raw.decode(encoding)
        except (LookupError, UnicodeDecodeError) as exc:
            raise InputError(f"{file}: cannot decode as {encoding}: {exc}") from None
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return raw.decode("utf-16")
    if raw.startswith(b"\xef\xbb\xbf"):
        return raw[3:].decode("utf-8", errors="strict")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        # Spreadsheet programs on Windows save "CSV" as cp1252; it decodes any byte but five.
        try:
            return raw.decode("cp1252")
        except UnicodeDecodeError:
            return raw.decode("latin-1")


def sniff_delimiter(text: str) -> str:
    first = text.split("\n", 1)[0]
    counts = {d: first.count(d) for d in (",", ";", "\t")}
    best = max(counts, key=lambda d: counts[d])
    return best if counts[best] else ","


def _delimiter(file: Path, forced: str | None, text: str) -> str:
    if forced in ("tab", "\\t"):
        return "\t"
    if forced is None or forced == "":
        return sniff_delimiter(text)
    if len(forced) != 1 or forced in ('"', "\n", "\r"):
        raise InputError(f"{file}: --delimiter must be one character (or `tab`), not {forced!r}")
    return forced


class _WideLine(Exception):
    """A line whose delimiters alone pass MAX_COLUMNS (raised before the parser splits it)."""


def _lines(text: str, delimiter: str) -> Iterator[str]:
    """The file's lines as the parser asks for them (ends kept: `\\n`, `\\r\\n` or `\\r`). Only a
    line longer than MAX_COLUMNS characters can hold that many delimiters; those are counted."""
    for line in io.StringIO(text, newline=""):
        if len(line) > MAX_COLUMNS and line.count(delimiter) >= MAX_COLUMNS:
            raise _WideLine
        yield line


def _parse_error(file: Path, row: int, error: csv.Error) -> InputError:
    reason = str(error)
    if reason == "unexpected end of data":
        return InputError(f"{file}: not readable as CSV: a quoted cell is never closed, starting at row {row}")
    return InputError(f"{file}: not readable as CSV: row {row}: {reason}")


def _rows(file: Path, text: str, delimiter: str) -> list[list[str]]:
    rows: list[list[str]] = []
    header_width = cells = 0
    try:
        for cells_read in csv.reader(_lines(text, delimiter), delimiter=delimiter, strict=True):
            if len(cells_read) > MAX_COLUMNS:
                raise too_wide(file, len(rows) + 1)
            row = [cell.strip() for cell in cells_read]
            if not rows:
                header_width = len(row) - next((i for i, cell in enumerate(reversed(row)) if cell), len(row))
            cells += max(len(row), header_width)  # the caller pads every row to the header's width
            if cells > MAX_CELLS:
                raise too_many_cells(file, len(rows) + 1, header_width)
            rows.append(row)
    except _WideLine:
        raise too_wide(file, len(rows) + 1) from None
    except csv.Error as exc:
        raise _parse_error(file, len(rows) + 1, exc) from None
    return rows


def read_csv_rows(file: Path, *, encoding: str | None = None, delimiter: str | None = None) -> list[list[str]]:
    """Every row of the file (the header first), each cell stripped, each as long as the file has it
    (a blank line is an empty row); InputError naming the file and the row on anything unreadable."""
    try:
        check_text_size(file, file.stat().st_size)
        raw = file.read_bytes()
    except OSError as exc:
        raise InputError(f"{file}: cannot read ({exc.strerror})") from None
    text = decode(raw, file, encoding)
    del raw
    if not text.strip("\r\n\ufeff"):
        raise InputError(f"{file}: the file is empty")
    return _rows(file, text, _delimiter(file, delimiter, text))
