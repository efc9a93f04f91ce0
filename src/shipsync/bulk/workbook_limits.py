"""Measure an XLSX or ODS workbook before it is parsed, and refuse one that would expand too far.

Checked, streaming and with bounded memory, from the zip itself:
- the inflated size of every member (declared sizes first; then the members the reader parses are
  inflated for real, which also catches a member whose declared size lies: zipfile checks it);
- XLSX: the text the cells expand to once shared strings are substituted (each reference to a
  shared string is another copy of it), and the rectangle the reader allocates (its corners are
  the extreme cell references; it is dense, empty cells included), its width among them (the
  reader pays per column: MAX_COLUMNS);
- ODS: the same two, with repeated rows, columns and spaces multiplied out (`ods_limits`).

The common case stays cheap: a sheet whose `<dimension>` is honest is verified by one RE2 scan
per chunk, and shared strings are counted reference by reference only when the cheap bound
(references x longest string) is over the limit.
"""

from __future__ import annotations

import re
import zipfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import re2

from shipsync.bulk import intake_limits as limits
from shipsync.bulk.ods_limits import measure_ods_content
from shipsync.errors import InputError

CHUNK = 8 * 1024 * 1024
OVERLAP = 256  # longer than any cell reference or `<v>` element the scans look for
_HEAD = 4096
_DIMENSION = re.compile(rb"<(?:\w+:)?dimension\s+ref\s*=\s*[\"'](?:[A-Za-z]+\d+:)?([A-Za-z]+)(\d+)[\"']")
_REF = re.compile(rb"\br\s*=\s*[\"']([A-Za-z]*)(\d+)[\"']")
# A cell or row element whose first attribute is not r (its place is counted, not written), or a
# reference in lower case: both need the exact scan.
_UNPLACED = rb"<(?:\w+:)?(?:c|row)(?:\s*/?>|\s+(?:[^r\s]|r[^\s=]))|\br\s*=\s*[\"'][A-Z]*[a-z]"
_SHARED_INDEX = re.compile(rb"v>\s*(\d{1,9})\s*<")
_SI_START = re.compile(rb"<(?:\w+:)?si[\s>/]")


@dataclass
class SheetScan:
    """What one worksheet member holds, as far as the bounds need to know."""

    size: int = 0
    dimension: tuple[int, int] | None = None  # (rows, columns) it declares
    escaped: bool = False  # a reference outside the dimension, or a cell without a reference
    values: int = 0  # an upper bound on the `<v>` elements (shared-string references among them)
    extent: tuple[int, int] = (0, 0)  # exact (rows, columns), when a full scan was needed


@dataclass
class WorkbookScan:
    sheets: dict[str, SheetScan] = field(default_factory=dict)
    shared_lengths: list[int] = field(default_factory=list)  # bytes of each shared string's XML


def column_number(letters: bytes) -> int:
    number = 0
    for letter in letters.upper():
        number = number * 26 + letter - 64
    return number


def column_letters(number: int) -> str:
    """1 -> A, 27 -> AA, 1025 -> AMK: a column as a spreadsheet names it."""
    letters = ""
    while number:
        number, rest = divmod(number - 1, 26)
        letters = chr(65 + rest) + letters
    return letters


def _greater_letters(columns: int) -> bytes:
    """RE2 alternatives matching column letters (before a digit) beyond column `columns`."""
    letters = column_letters(columns).encode()
    parts = [b"[A-Za-z]{%d,}" % (len(letters) + 1)]
    for i, letter in enumerate(letters):
        if letter < ord("Z"):
            parts.append(re.escape(letters[:i]) + b"[%c-Z]" % (letter + 1) + b"[A-Za-z]" * (len(letters) - i - 1))
    return b"(?:" + b"|".join(parts) + b")"


def _greater_digits(rows: int) -> bytes:
    """RE2 alternatives matching a row number (digits before the closing quote) beyond `rows`."""
    digits = str(rows).encode()
    parts = [b"[0-9]{%d,}" % (len(digits) + 1)]
    for i, digit in enumerate(digits):
        if digit < ord("9"):
            parts.append(digits[:i] + b"[%c-9]" % (digit + 1) + b"[0-9]" * (len(digits) - i - 1))
    return b"(?:" + b"|".join(parts) + b")"


def _escape_pattern(dimension: tuple[int, int] | None) -> Any:
    if dimension is None:
        return re2.compile(rb"\br\s*=\s*[\"']|" + _UNPLACED)  # any reference: nothing was declared
    rows, columns = dimension
    outside = rb"\br\s*=\s*[\"'](?:%s[0-9]|[A-Za-z]{0,3}%s[\"'])" % (_greater_letters(columns), _greater_digits(rows))
    return re2.compile(outside + b"|" + _UNPLACED)


def _chunks(book: zipfile.ZipFile, info: zipfile.ZipInfo) -> Iterator[bytes]:
    """A member's inflated bytes in chunks, each led by the tail of the one before (so a match
    across a boundary is seen; counts may see the tail twice, which only raises the bounds).
    zipfile stops at the declared size and checks the CRC there: a member cannot inflate past
    what was declared and checked in `_check`."""
    tail = b""
    with book.open(info) as member:
        while chunk := member.read(CHUNK):
            yield tail + chunk
            tail = chunk[-OVERLAP:]


def _scan_sheet(book: zipfile.ZipFile, info: zipfile.ZipInfo, head: bytes) -> SheetScan:
    scan = SheetScan(size=info.file_size)
    declared = _DIMENSION.search(head)
    if declared:
        scan.dimension = (int(declared.group(2)), column_number(declared.group(1)))
    escape = _escape_pattern(scan.dimension)
    for data in _chunks(book, info):
        scan.values += data.count(b"v>") // 2 + 1
        if not scan.escaped and escape.search(data):
            scan.escaped = True
    rows, columns = scan.dimension or (0, 0)
    if scan.escaped or rows * columns > limits.MAX_SHEET_AREA or columns > limits.MAX_COLUMNS:  # a dimension may also overstate: count
        scan.escaped = True
        scan.extent = _exact_extent(book, info)
    return scan


def _exact_extent(book: zipfile.ZipFile, info: zipfile.ZipInfo) -> tuple[int, int]:
    """(rows, columns) of the rectangle, from every reference; unplaced cells and rows widen it."""
    rows = columns = 0
    unplaced = re.compile(_UNPLACED)
    for data in _chunks(book, info):
        for match in _REF.finditer(data):
            rows = max(rows, int(match.group(2)))
            if match.group(1):
                columns = max(columns, column_number(match.group(1)))
        moved = len(unplaced.findall(data))
        rows, columns = rows + moved, columns + moved
    return rows, columns


def _shared_lengths(book: zipfile.ZipFile, info: zipfile.ZipInfo) -> list[int]:
    """Bytes of each shared string's XML, in order: at least the UTF-8 bytes of its text.

    Text cannot hold a literal `<`, so splitting at each `<si` start cuts between items only. A
    CDATA section can hold one: then every item is given the length of the whole."""
    data = book.read(info)
    starts = data.count(b"<si")
    if starts == data.count(b"<si>") + data.count(b"<si ") + data.count(b"<si/") and b":si" not in data:
        parts = data.split(b"<si")  # every `<si` starts an item, none has a prefix: C speed
    else:
        parts = _SI_START.split(data)
    lengths = [len(part) for part in parts[1:]]
    return [len(data)] * len(lengths) if b"<![CDATA[" in data else lengths


def _shared_text(book: zipfile.ZipFile, info: zipfile.ZipInfo, lengths: list[int]) -> int:
    """Bytes of shared-string text the sheet's references expand to (any `<v>` counts as one)."""
    counts: Counter[bytes] = Counter()
    for data in _chunks(book, info):
        counts.update(_SHARED_INDEX.findall(data))
    return sum(lengths[int(i)] * n for i, n in counts.items() if int(i) < len(lengths))


def _kind(head: bytes) -> str:
    start = head.lstrip()
    if start.startswith(b"<?xml"):
        start = start[start.find(b"?>") + 2 :].lstrip()
    name = re.match(rb"<(?:\w+:)?(\w+)", start)
    return name.group(1).decode() if name else ""


def check_workbook(file: Path) -> None:
    """Raise InputError (one line) when an XLSX/ODS would expand past the bounds of intake_limits."""
    try:
        with zipfile.ZipFile(file) as book:
            _check(file, book)
    except (zipfile.BadZipFile, NotImplementedError, EOFError, ValueError) as exc:
        raise InputError(f"{file}: not a readable workbook ({type(exc).__name__}: {exc})") from None


def _check(file: Path, book: zipfile.ZipFile) -> None:
    members = book.infolist()
    declared = sum(info.file_size for info in members)
    if declared > limits.MAX_UNZIPPED_BYTES:
        raise limits.too_much(file, "its zip members inflate to", declared, limits.MAX_UNZIPPED_BYTES)
    scan = WorkbookScan()
    shared: zipfile.ZipInfo | None = None
    for info in members:
        if info.is_dir() or not info.filename.lower().endswith(".xml"):
            continue
        with book.open(info) as member:
            head = member.read(_HEAD)
        kind = _kind(head)
        if kind == "worksheet":
            scan.sheets[info.filename] = _scan_sheet(book, info, head)
        elif kind == "sst":
            shared = info
            scan.shared_lengths = _shared_lengths(book, info)
        elif kind == "document-content" or info.filename == "content.xml":
            content = measure_ods_content(file, book, info)
            _within(file, content.area, content.columns, content.text)
    for name, sheet in scan.sheets.items():
        rows, columns = sheet.extent if sheet.escaped else (sheet.dimension or (0, 0))
        text = sheet.size + _shared_bound(book, book.getinfo(name), sheet, scan.shared_lengths, shared)
        _within(file, rows * columns, columns, text)


def _shared_bound(
    book: zipfile.ZipFile, info: zipfile.ZipInfo, sheet: SheetScan, lengths: list[int], shared: zipfile.ZipInfo | None
) -> int:
    if shared is None or not lengths:
        return 0
    cheap = sheet.values * max(lengths)
    return cheap if sheet.size + cheap <= limits.MAX_TEXT_BYTES else _shared_text(book, info, lengths)


def _within(file: Path, area: int, columns: int, text: int) -> None:
    if area > limits.MAX_SHEET_AREA:
        raise limits.too_much(file, "a sheet spans", area, limits.MAX_SHEET_AREA, "cells (first to last cell, empty ones included)")
    if columns > limits.MAX_COLUMNS:
        widest = f"column {column_letters(columns)} ({columns:,})"
        raise InputError(f"{file}: a sheet reaches {widest}, more columns than shipsync reads ({limits.MAX_COLUMNS:,})")
    if text > limits.MAX_TEXT_BYTES:
        raise limits.too_much(file, "its cells expand to", text, limits.MAX_TEXT_BYTES)
