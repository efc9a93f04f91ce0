"""Measure an ODS sheet's content before it is parsed: repeats multiplied out, streaming.

ODS compresses repetition into attributes: a row repeated a million times, a cell repeated across
a thousand columns, `<text:s text:c="100000000"/>` for a hundred million spaces. The reader expands
them all, so a few kilobytes can ask for gigabytes. This walks `content.xml` with expat (no DTD,
no entities) and returns, for the largest sheet, the rectangle from A1 to its last non-empty cell,
the widest row of any sheet, and the bytes of text all its cells expand to. Empty repeated cells and rows (LibreOffice pads
every sheet with them) count for neither: the reader skips them too.
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass
from pathlib import Path
from xml.parsers import expat

from shipsync.errors import InputError

TABLE = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
OFFICE = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
CELLS = (f"{TABLE}|table-cell", f"{TABLE}|covered-table-cell")
CHUNK = 1024 * 1024


@dataclass(frozen=True)
class OdsContent:
    """What the reader would expand `content.xml` to."""

    area: int  # cells of the largest sheet's rectangle, A1 to its last non-empty cell
    columns: int  # the widest row of any sheet, to its last non-empty cell
    text: int  # bytes of text of all cells, repeats expanded


def _repeat(attributes: dict[str, str], name: str) -> int:
    try:
        return max(1, int(attributes.get(f"{TABLE}|{name}", "1")))
    except ValueError:
        return 1


class _Walk:
    """expat handlers keeping the counts of the sheet being read."""

    def __init__(self) -> None:
        self.area = 0
        self.columns = 0
        self.text = 0
        self._reset_sheet()
        self.rows_repeated = self.columns_repeated = 1
        self.column = self.row_width = 0
        self.in_cell = False
        self.cell_text = 0  # bytes of text, spaces expanded
        self.cell_breaks = 0  # paragraphs, tabs and line breaks: a character each once read
        self.cell_filled = False

    def _reset_sheet(self) -> None:
        self.row = 0  # rows before the current one
        self.last_row = 0  # extent of the last row holding something
        self.widest = 0

    def start(self, name: str, attributes: dict[str, str]) -> None:
        if name == f"{TABLE}|table":
            self._reset_sheet()
        elif name == f"{TABLE}|table-row":
            self.rows_repeated = _repeat(attributes, "number-rows-repeated")
            self.column = 0
            self.row_width = 0
        elif name in CELLS:
            self.in_cell = True
            self.columns_repeated = _repeat(attributes, "number-columns-repeated")
            self.cell_text = self.cell_breaks = 0
            self.cell_filled = f"{OFFICE}|value-type" in attributes
        elif self.in_cell and name == f"{TEXT}|s":
            self.cell_text += _repeat({f"{TABLE}|c": attributes.get(f"{TEXT}|c", "1")}, "c")
        elif self.in_cell and name in (f"{TEXT}|tab", f"{TEXT}|line-break", f"{TEXT}|p"):
            self.cell_breaks += 1

    def characters(self, data: str) -> None:
        if self.in_cell:
            self.cell_text += len(data.encode())

    def end(self, name: str) -> None:
        if name in CELLS:
            self.in_cell = False
            self.column += self.columns_repeated
            if self.cell_filled or self.cell_text:
                self.row_width = self.column
                self.text += (self.cell_text + self.cell_breaks) * self.columns_repeated * self.rows_repeated
        elif name == f"{TABLE}|table-row":
            self.row += self.rows_repeated
            if self.row_width:
                self.last_row = self.row
                self.widest = max(self.widest, self.row_width)
                self.area = max(self.area, self.last_row * self.widest)
                self.columns = max(self.columns, self.widest)


def _refuse_dtd(*_: object) -> None:
    raise ValueError("a DTD in content.xml")


def measure_ods_content(file: Path, book: zipfile.ZipFile, info: zipfile.ZipInfo) -> OdsContent:
    """The rectangle, width and text of the sheets in `content.xml`, repeats expanded."""
    walk = _Walk()
    parser = expat.ParserCreate(namespace_separator="|")
    parser.StartElementHandler = walk.start
    parser.EndElementHandler = walk.end
    parser.CharacterDataHandler = walk.characters
    parser.StartDoctypeDeclHandler = _refuse_dtd
    try:
        with book.open(info) as member:
            while chunk := member.read(CHUNK):
                parser.Parse(chunk, False)
            parser.Parse(b"", True)
    except (expat.ExpatError, ValueError) as exc:
        raise InputError(f"{file}: not a readable ODS sheet ({exc})") from None
    return OdsContent(walk.area, walk.columns, walk.text)
