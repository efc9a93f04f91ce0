"""How much a spreadsheet may make shipsync hold: the bounds checked before and while reading.

A workbook of a few kilobytes can ask for gigabytes: one long shared string referenced from every
cell, two cells at opposite corners of a sheet (the reader allocates the rectangle between them), a
zip member that inflates a thousandfold, an ODS cell repeated a million times. So before a workbook
reaches the parser, `shipsync.bulk.workbook_limits` measures what it would expand to, and refuses
it with one line when it exceeds these bounds. A CSV holds no more text than its bytes, but a
line of commas is as many cells: `shipsync.bulk.csv_input` checks the width and the cells of each
row as it reads it, before anything is built for it.
"""

from __future__ import annotations

from pathlib import Path

from shipsync.errors import InputError

MiB = 1024 * 1024
# Columns of a sheet, its widest row counted (a sheet for `shipsync apply` needs a key and the
# fields it sets). Reading costs per column, empty ones too, so a sheet of Excel's widest grows
# the read many times over for nothing.
MAX_COLUMNS = 1_024
# Rows x columns of the table shipsync builds (a million rows of 50 columns).
MAX_CELLS = 50_000_000
# Rows x columns of the rectangle a workbook reader allocates (empty cells included): a few dozen
# bytes each in the reader plus a Python reference, so this keeps the rectangle within a gigabyte.
MAX_SHEET_AREA = 20_000_000
# Text the cells hold once shared strings and repeats are expanded (a CSV: its size in bytes).
# A million rows of 8 fields of 12 characters fit in less than half of it.
MAX_TEXT_BYTES = 256 * MiB
# Bytes the members of an XLSX/ODS zip inflate to, all together (a zip bomb is refused unread).
MAX_UNZIPPED_BYTES = 1024 * MiB


def too_much(file: Path, what: str, amount: int, limit: int, unit: str = "bytes") -> InputError:
    shown = f"{amount / MiB:,.0f} MB" if unit == "bytes" else f"{amount:,} {unit}"
    bound = f"{limit / MiB:,.0f} MB" if unit == "bytes" else f"{limit:,} {unit}"
    return InputError(f"{file}: {what} {shown}, more than shipsync reads at once ({bound})")


def too_wide(file: Path, row: int) -> InputError:
    return InputError(f"{file}: row {row:,}, column {MAX_COLUMNS + 1:,}: more columns than shipsync reads ({MAX_COLUMNS:,})")


def too_many_cells(file: Path, row: int, columns: int) -> InputError:
    return InputError(
        f"{file}: row {row:,}: {row:,} rows of {columns:,} columns or more pass the {MAX_CELLS:,} cells shipsync reads at once"
    )


def check_text_size(file: Path, size: int) -> None:
    if size > MAX_TEXT_BYTES:
        raise too_much(file, "the file holds", size, MAX_TEXT_BYTES)
