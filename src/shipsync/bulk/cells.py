"""Spreadsheet cells to the typed JSON value a definition expects, then the definition's rules.

A cell is text (every CSV cell, and text cells of a workbook) or a typed workbook cell: a number,
a boolean, a date or a date-time. People type `TRUE`, `yes`, `1,234.50`, `03/15/2026` and `High`;
the service wants `true`, 1234.5, a date string and the option's exact value. Text is parsed here;
a typed cell is taken as it is when it is of the field's kind (a date cell for a date field: no
format guessing) and refused, naming what it is, when it is not. What is valid is then decided by
`shipsync.values.check_value`, the same rules the sandbox enforces.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, date, datetime, time
from functools import lru_cache
from typing import Any, TypeAlias

from shipsync.values import FieldRules, ValueProblem, check_value, parse_datetime, strptime_format

# What one cell of a Sheet holds. An empty cell is "". A date-time at midnight is read as a date
# (a workbook stores both as one number; nothing tells them apart but the time of day).
Cell: TypeAlias = str | bool | int | float | date | datetime

TRUE_WORDS = frozenset({"true", "yes", "y", "1", "x", "on"})
FALSE_WORDS = frozenset({"false", "no", "n", "0", "off"})
LIST_SEPARATORS = re.compile(r"\s*[;|]\s*")
_THOUSANDS = re.compile(r"^[-+]?\d{1,3}(,\d{3})+(\.\d+)?$")
_EUROPEAN = re.compile(r"^[-+]?\d{1,3}(\.\d{3})+(,\d+)?$")


def cell_text(cell: Cell) -> str:
    """A cell as the text a person sees: 123456 (not 123456.0), TRUE, 2026-05-01, 2026-05-01T18:30:00."""
    if isinstance(cell, str):
        return cell
    if isinstance(cell, bool):
        return "TRUE" if cell else "FALSE"
    if isinstance(cell, float):
        return str(int(cell)) if cell.is_integer() else repr(cell)
    if isinstance(cell, datetime):
        return cell.date().isoformat() if cell.time() == time() and cell.tzinfo is None else cell.isoformat()
    return cell.isoformat() if isinstance(cell, date) else str(cell)


def cell_kind(cell: Cell) -> str:
    """What a typed cell is, for messages: `a number cell (42)`."""
    if isinstance(cell, bool):
        kind = "a yes/no"
    elif isinstance(cell, int | float):
        kind = "a number"
    elif isinstance(cell, datetime):
        kind = "a date-time"
    elif isinstance(cell, date):
        kind = "a date"
    else:
        kind = "a text"
    return f"{kind} cell ({cell_text(cell)})"


def split_list(text: str) -> list[str]:
    """`a; b | c` -> [a, b, c]: lists in one cell, separated by `;` or `|`."""
    return [part for part in LIST_SEPARATORS.split(text.strip()) if part]


def parse_number(text: str) -> int | float:
    cleaned = text.strip().replace("\u00a0", "").replace(" ", "").replace("$", "")
    if _THOUSANDS.match(cleaned):
        cleaned = cleaned.replace(",", "")
    elif _EUROPEAN.match(cleaned):
        cleaned = cleaned.replace(".", "").replace(",", ".")
    try:
        number = float(cleaned)
    except ValueError:
        raise ValueProblem(f"not a number: {text!r}") from None
    return int(number) if number.is_integer() and "." not in cleaned and "e" not in cleaned.lower() else number


# The dates a text cell may hold besides the field's own format (`default_format`), as the message
# names them: only forms that read one way. A slash date is read only in the field's own format:
# 03/04/2026 is the 4th of March to some and the 3rd of April to others.
DATE_FORMATS = (
    ("YYYY-MM-DD", "%Y-%m-%d"),
    ("YYYY/MM/DD", "%Y/%m/%d"),
    ("DD.MM.YYYY", "%d.%m.%Y"),
    ("15 Mar 2026", "%d %b %Y"),
    ("15 March 2026", "%d %B %Y"),
    ("Mar 15, 2026", "%b %d, %Y"),
    ("March 15, 2026", "%B %d, %Y"),
)


def date_formats(default_format: str | None) -> list[tuple[str, str]]:
    """(as the message names it, strptime format) of every date a cell may hold, the field's first."""
    own = [(f"{default_format} (the field's format)", strptime_format(default_format))] if default_format else []
    return own + [f for f in DATE_FORMATS if not own or f[1] != own[0][1]]


@lru_cache(maxsize=65_536)  # spreadsheets repeat dates; strptime is the slow part of validation
def read_date(text: str, default_format: str | None) -> date:
    """A date cell's text in one of `date_formats`; ValueProblem naming exactly those otherwise."""
    text = text.strip()
    formats = date_formats(default_format)
    for _, pattern in formats:
        try:
            return datetime.strptime(text, pattern).date()
        except ValueError:
            continue
    raise ValueProblem(f"not a date: {text!r} (expected one of: {'; '.join(name for name, _ in formats)})")


def _option(text: str, options: tuple[str, ...], labels: dict[str, str]) -> str:
    if text in options:
        return text
    folded = text.casefold()
    for value in options:
        if value.casefold() == folded or labels.get(value, "").casefold() == folded:
            return value
    raise ValueProblem(f"{text!r} is not an option (options: {', '.join(options) or 'none'})")


def _wrong_kind(cell: Cell, expected: str) -> ValueProblem:
    return ValueProblem(f"expected {expected}, got {cell_kind(cell)}")


def _typed_value(cell: bool | int | float | date, kind: str) -> Any:
    """The value of a typed (non-text) cell for a field of `kind`; text kinds take its text."""
    if kind == "number":
        if isinstance(cell, bool) or not isinstance(cell, int | float):
            raise _wrong_kind(cell, "a number")
        if not math.isfinite(cell):
            raise ValueProblem(f"not a finite number: {cell!r}")
        return cell
    if kind == "boolean":
        if isinstance(cell, bool):
            return cell
        if isinstance(cell, int | float) and cell in (0, 1):  # 1 and 0 typed into a yes/no column
            return bool(cell)
        raise _wrong_kind(cell, "yes/no")
    if kind == "date":
        if isinstance(cell, datetime):  # midnight was read as a date: this one has a time of day
            raise _wrong_kind(cell, "a date")
        if not isinstance(cell, date):
            raise _wrong_kind(cell, "a date")
        return cell.isoformat()
    if kind == "datetime":
        if not isinstance(cell, date):
            raise _wrong_kind(cell, "a date-time")
        moment = cell if isinstance(cell, datetime) else datetime.combine(cell, time())
        return instant_text(moment)
    return None


def instant_text(moment: datetime) -> str:
    """A date-time as the service takes it: an instant with its offset. A workbook's date-times,
    and text written without a zone, carry none: they are read as UTC (a time without an offset
    names no instant, and the service refuses one)."""
    aware = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    return aware.isoformat().replace("+00:00", "Z")


def cell_value(cell: Cell, rules: FieldRules, labels: dict[str, str] | None = None) -> Any:
    """The typed value for a non-empty cell, checked against the rules; ValueProblem says why not."""
    kind = rules.data_type
    value: Any = None
    if not isinstance(cell, str):
        value = _typed_value(cell, kind)
    if value is None:
        text = cell_text(cell)
        if kind == "number":
            value = parse_number(text)
        elif kind == "boolean":
            word = text.strip().casefold()
            if word in TRUE_WORDS:
                value = True
            elif word in FALSE_WORDS:
                value = False
            else:
                raise ValueProblem(f"not a yes/no value: {text!r} (use TRUE/FALSE, yes/no or 1/0)")
        elif kind == "date":
            value = read_date(text, rules.default_format).isoformat()
        elif kind == "datetime":
            value = instant_text(parse_datetime(text))
        elif kind == "enum":
            value = _option(text.strip(), rules.options, labels or {})
        elif kind == "enum_multi":
            value = [_option(part, rules.options, labels or {}) for part in split_list(text)]
        else:
            value = text
    check_value(value, rules)
    return value
