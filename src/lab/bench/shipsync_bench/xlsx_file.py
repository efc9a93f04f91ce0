"""Write an XLSX the way Excel does (shared strings, typed cells, date styles), fast; or one from
raw sheet XML, for the hostile-input tests.

openpyxl takes ~20 s to write 100,000 rows x 9 cells here; this writes them in ~2 s, so the bulk
benchmark measures reading, not making its input.
"""

from __future__ import annotations

import zipfile
from collections.abc import Iterable, Sequence
from datetime import date, datetime
from pathlib import Path
from xml.sax.saxutils import escape

MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
RELS = "http://schemas.openxmlformats.org/package/2006/relationships"
DOC = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_TYPES = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
    '<Override PartName="/xl/worksheets/sheet1.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
    '<Override PartName="/xl/sharedStrings.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/>'
    '<Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/>'
    "</Types>"
)
_ROOT_RELS = (
    f'<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="{RELS}">'
    f'<Relationship Id="rId1" Type="{DOC}/officeDocument" Target="xl/workbook.xml"/></Relationships>'
)
_BOOK_RELS = (
    f'<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="{RELS}">'
    f'<Relationship Id="rId1" Type="{DOC}/worksheet" Target="worksheets/sheet1.xml"/>'
    f'<Relationship Id="rId2" Type="{DOC}/sharedStrings" Target="sharedStrings.xml"/>'
    f'<Relationship Id="rId3" Type="{DOC}/styles" Target="styles.xml"/></Relationships>'
)
# Style 1 is a date (number format 14), style 2 a date-time (22), as Excel writes them.
_STYLES = (
    f'<?xml version="1.0" encoding="UTF-8"?><styleSheet xmlns="{MAIN}">'
    '<fonts count="1"><font><sz val="11"/><name val="Calibri"/></font></fonts>'
    '<fills count="1"><fill><patternFill patternType="none"/></fill></fills>'
    '<borders count="1"><border/></borders><cellStyleXfs count="1"><xf/></cellStyleXfs>'
    '<cellXfs count="3"><xf numFmtId="0"/><xf numFmtId="14" applyNumberFormat="1"/><xf numFmtId="22" applyNumberFormat="1"/></cellXfs>'
    "</styleSheet>"
)
_EPOCH = datetime(1899, 12, 30)


def column_letters(index: int) -> str:
    letters = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(65 + rest) + letters
    return letters


def sheet_xml(rows: Iterable[Sequence[object]], shared: dict[str, int]) -> str:
    """A worksheet's XML for rows of str, bool, int, float, date and datetime (None: no cell)."""
    parts = [f'<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="{MAIN}"><sheetData>']
    width = last_row = 0
    for r, row in enumerate(rows, start=1):
        last_row = r
        parts.append(f'<row r="{r}">')
        for c, value in enumerate(row):
            width = max(width, c + 1)
            ref = f"{column_letters(c)}{r}"
            if value is None or value == "":
                continue
            if isinstance(value, str):
                parts.append(f'<c r="{ref}" t="s"><v>{shared.setdefault(value, len(shared))}</v></c>')
            elif isinstance(value, bool):
                parts.append(f'<c r="{ref}" t="b"><v>{int(value)}</v></c>')
            elif isinstance(value, datetime):
                parts.append(f'<c r="{ref}" s="2"><v>{(value - _EPOCH).total_seconds() / 86400!r}</v></c>')
            elif isinstance(value, date):
                parts.append(f'<c r="{ref}" s="1"><v>{(value - _EPOCH.date()).days}</v></c>')
            else:
                parts.append(f'<c r="{ref}"><v>{value!r}</v></c>')
        parts.append("</row>")
    parts.append("</sheetData></worksheet>")
    dimension = f'<dimension ref="A1:{column_letters(max(width, 1) - 1)}{max(last_row, 1)}"/>'
    parts[0] = parts[0].replace("<sheetData>", dimension + "<sheetData>")
    return "".join(parts)


def shared_strings_xml(strings: Iterable[str]) -> str:
    items = "".join(f'<si><t xml:space="preserve">{escape(s)}</t></si>' for s in strings)
    return f'<?xml version="1.0" encoding="UTF-8"?><sst xmlns="{MAIN}">{items}</sst>'


def write_raw_xlsx(path: Path, sheet: str, shared_strings: str = "", *, sheet_name: str = "Sheet1") -> Path:
    """An XLSX of one sheet from its XML (and the shared strings' XML), nothing checked."""
    book = (
        f'<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="{MAIN}" xmlns:r="{DOC}">'
        f'<sheets><sheet name="{escape(sheet_name)}" sheetId="1" r:id="rId1"/></sheets></workbook>'
    )
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        out.writestr("[Content_Types].xml", _TYPES)
        out.writestr("_rels/.rels", _ROOT_RELS)
        out.writestr("xl/workbook.xml", book)
        out.writestr("xl/_rels/workbook.xml.rels", _BOOK_RELS)
        out.writestr("xl/styles.xml", _STYLES)
        out.writestr("xl/worksheets/sheet1.xml", sheet)
        out.writestr("xl/sharedStrings.xml", shared_strings or shared_strings_xml([]))
    return path


def write_xlsx(path: Path, rows: Iterable[Sequence[object]], *, sheet_name: str = "Sheet1") -> Path:
    """An XLSX of one sheet holding `rows`, typed as Excel types them."""
    shared: dict[str, int] = {}
    sheet = sheet_xml(rows, shared)
    return write_raw_xlsx(path, sheet, shared_strings_xml(shared), sheet_name=sheet_name)
