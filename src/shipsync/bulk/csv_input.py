"""Reading a CSV with pandas: any common encoding and delimiter, every cell kept as the text typed.

Cells stay text (`NA`, `null`, `0012` and `1e5` are what the user wrote; the field's converter
decides what they mean). Rows may be ragged: the reader is told the widest row so that nothing is
cut, and the caller reports the row that is too long.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pandas as pd

from shipsync.bulk.intake_limits import check_text_size
from shipsync.errors import InputError

_SAW = re.compile(r"saw (\d+)")
_ROW = re.compile(r"\brow (\d+)")


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


def _frame(file: Path, text: str, delimiter: str) -> pd.DataFrame:
    # The widest physical line bounds the widest row, except a row whose quoted cells span lines:
    # pandas names that one ("saw N") and the read is retried that wide.
    width = max((line.count(delimiter) for line in text.splitlines()), default=0) + 1
    for _ in range(8):
        try:
            return pd.read_csv(
                io.StringIO(text),
                sep=delimiter,
                header=None,
                names=range(width),
                dtype=str,
                keep_default_na=False,
                na_filter=False,
                skip_blank_lines=False,
                quoting=csv.QUOTE_MINIMAL,
                engine="c",
            )
        except pd.errors.EmptyDataError:
            raise InputError(f"{file}: the file is empty") from None
        except pd.errors.ParserError as exc:
            wider = _SAW.search(str(exc))
            if not wider or int(wider.group(1)) <= width:
                # pandas counts rows from 0; people (and every other message) count from 1.
                reason = _ROW.sub(lambda m: f"row {int(m.group(1)) + 1}", str(exc).strip())
                raise InputError(f"{file}: not readable as CSV: {reason}") from None
            width = int(wider.group(1))
    raise InputError(f"{file}: not readable as CSV: rows keep growing wider than {width} cells")


def read_csv_rows(file: Path, *, encoding: str | None = None, delimiter: str | None = None) -> list[list[str]]:
    """Every row of the file (the header first), each cell stripped; rows padded to the widest."""
    try:
        check_text_size(file, file.stat().st_size)
        raw = file.read_bytes()
    except OSError as exc:
        raise InputError(f"{file}: cannot read ({exc.strerror})") from None
    text = decode(raw, file, encoding)
    del raw
    if not text.strip("\r\n\ufeff"):
        raise InputError(f"{file}: the file is empty")
    frame = _frame(file, text, _delimiter(file, delimiter, text))
    return [[cell.strip() for cell in row] for row in frame.to_numpy().tolist()]
