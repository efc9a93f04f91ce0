"""What shipsync writes into a cell of a results file: never a formula, never unbounded.

A spreadsheet program reads a cell as a formula when it starts with = + - @ (or their full-width
forms, which some convert), or a tab or carriage return (OWASP's CSV injection list). It may also
split a cell on a separator the writer did not use: opened in a `;` locale, the `,`-separated cell
`x;=cmd|'/c calc'!A0;y` becomes three cells, the middle one a formula. So a quote mark goes before
every trigger at the start of the cell or after any separator a program may split on (`,` `;`
tab, line breaks), spaces between them included; the cell then reads as text everywhere, and
the quote shows what was done.

A cell's text is also capped (Excel holds at most 32,767 characters in a cell anyway), with a
note in the cell saying how long it was: an amplified input cannot grow a results file without
bound.
"""

from __future__ import annotations

import re

MAX_CELL_CHARACTERS = 32_767
TRIGGERS = "=+-@\t\r\uff1d\uff0b\uff0d\uff20"
SEPARATORS = ",;\t\r\n"
# A trigger at the start, or after a separator (spaces between may be trimmed by the reader).
_FORMULA = re.compile(rf"(^|[{re.escape(SEPARATORS)}])([ \u00a0]*)(?=[{re.escape(TRIGGERS)}])")


def capped(text: str) -> str:
    if len(text) <= MAX_CELL_CHARACTERS:
        return text
    note = f" [cut: {len(text):,} characters, the first {MAX_CELL_CHARACTERS - 64:,} shown]"
    return text[: MAX_CELL_CHARACTERS - 64] + note


def safe_cell(text: str) -> str:
    """Neutralize anything a spreadsheet program could read as a formula, anywhere in the cell."""
    return _FORMULA.sub(r"\1\2'", text)


def results_cell(text: str) -> str:
    """A cell as written to a results file: capped, then neutralized."""
    return safe_cell(capped(text))
