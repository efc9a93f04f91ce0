"""Reading spreadsheets: CSV in any common encoding and delimiter, or the first (or named) XLSX sheet.

Headers match case- and space-insensitively (`Container Number` is `container_number`). Every
problem names the file, and the row or column where it is.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from pathlib import Path

from shipsync.errors import InputError

MAX_CELLS = 50_000_000  # a guard against files no spreadsheet user means to send


@dataclass
class Sheet:
    """A table read from a file: normalized headers and the raw text of each row."""

    file: Path
    sheet: str | None
    headers: list[str]  # normalized
    original_headers: list[str]
    rows: list[list[str]]  # padded to the header width
    row_numbers: list[int]  # as a spreadsheet user counts them (header is row 1)
    ragged: dict[int, str]  # row number -> problem with its shape


def normalize_header(text: str) -> str:
    return re.sub(r"[\s\-]+", "_", text.strip().lower()).strip("_")


def _decode(raw: bytes, file: Path, encoding: str | None) -> str:
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


def _sniff_delimiter(text: str) -> str:
    first = text.split("\n", 1)[0]
    counts = {d: first.count(d) for d in (",", ";", "\t")}
    best = max(counts, key=lambda d: counts[d])
    return best if counts[best] else ","


def read_csv(file: Path, *, encoding: str | None = None, delimiter: str | None = None) -> tuple[list[str], list[list[str]]]:
    try:
        raw = file.read_bytes()
    except OSError as exc:
        raise InputError(f"{file}: cannot read ({exc.strerror})") from None
    text = _decode(raw, file, encoding)
    if delimiter in ("tab", "\\t"):
        delimiter = "\t"
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter or _sniff_delimiter(text))
    try:
        table = list(reader)
    except csv.Error as exc:
        raise InputError(f"{file}: not readable as CSV: {exc}") from None
    if not table:
        raise InputError(f"{file}: the file is empty")
    return table[0], table[1:]


def read_xlsx(file: Path, sheet: str | None) -> tuple[str, list[str], list[list[str]]]:
    from openpyxl import load_workbook

    try:
        workbook = load_workbook(file, read_only=True, data_only=True)
    except Exception as exc:  # openpyxl raises many kinds for a broken file
        raise InputError(f"{file}: not a readable XLSX workbook ({type(exc).__name__})") from None
    try:
        if sheet is not None and sheet not in workbook.sheetnames:
            raise InputError(f"{file}: no sheet named {sheet!r} (sheets: {', '.join(workbook.sheetnames)})")
        worksheet = workbook[sheet] if sheet else workbook.worksheets[0]
        rows = [["" if v is None else _cell_text(v) for v in row] for row in worksheet.iter_rows(values_only=True)]
        name = worksheet.title
    finally:
        workbook.close()
    if not rows:
        raise InputError(f"{file}: sheet {name!r} is empty")
    return name, rows[0], rows[1:]


def _cell_text(value: object) -> str:
    from datetime import date, datetime

    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, datetime):
        return value.isoformat() if value.time() != datetime.min.time() else value.date().isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def read_sheet(file: Path, *, sheet: str | None = None, encoding: str | None = None, delimiter: str | None = None) -> Sheet:
    """Read a CSV or XLSX file into a Sheet; raises InputError naming the file on anything unusable."""
    if not file.exists():
        raise InputError(f"{file}: no such file")
    sheet_name: str | None = None
    if file.suffix.lower() in (".xlsx", ".xlsm"):
        sheet_name, header, body = read_xlsx(file, sheet)
    else:
        header, body = read_csv(file, encoding=encoding, delimiter=delimiter)
    original = [h.strip() for h in header]
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
    width = len(normalized)
    if width * max(1, len(body)) > MAX_CELLS:
        raise InputError(f"{file}: {len(body):,} rows x {width} columns is more than shipsync reads at once")
    rows, numbers, ragged = [], [], {}
    for offset, raw_row in enumerate(body):
        number = offset + 2
        cells = [c.strip() for c in raw_row]
        if not any(cells):
            continue  # blank lines between blocks are common in spreadsheets
        if len(cells) > width and any(cells[width:]):
            ragged[number] = f"{len(cells)} cells but {width} columns"
        rows.append((cells + [""] * width)[:width])
        numbers.append(number)
    return Sheet(file, sheet_name, normalized, original, rows, numbers, ragged)
