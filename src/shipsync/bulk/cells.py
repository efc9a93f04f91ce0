"""Spreadsheet text to the typed JSON value a definition expects, then the definition's rules.

People type `TRUE`, `yes`, `1,234.50`, `03/15/2026` and `High`; the service wants `true`, 1234.5,
a date string and the option's exact value. Conversion happens here; what is valid is decided by
`shipsync.values.check_value`, the same rules the sandbox enforces.
"""

from __future__ import annotations

import re
from typing import Any

from shipsync.values import FieldRules, ValueProblem, check_value, parse_date, parse_datetime

TRUE_WORDS = frozenset({"true", "yes", "y", "1", "x", "on"})
FALSE_WORDS = frozenset({"false", "no", "n", "0", "off"})
LIST_SEPARATORS = re.compile(r"\s*[;|]\s*")
_THOUSANDS = re.compile(r"^[-+]?\d{1,3}(,\d{3})+(\.\d+)?$")
_EUROPEAN = re.compile(r"^[-+]?\d{1,3}(\.\d{3})+(,\d+)?$")


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


def _option(text: str, options: tuple[str, ...], labels: dict[str, str]) -> str:
    if text in options:
        return text
    folded = text.casefold()
    for value in options:
        if value.casefold() == folded or labels.get(value, "").casefold() == folded:
            return value
    raise ValueProblem(f"{text!r} is not an option (options: {', '.join(options) or 'none'})")


def cell_value(text: str, rules: FieldRules, labels: dict[str, str] | None = None) -> Any:
    """The typed value for a non-empty cell, checked against the rules; ValueProblem says why not."""
    kind = rules.data_type
    value: Any
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
        value = parse_date(text, rules.default_format).isoformat()
    elif kind == "datetime":
        value = parse_datetime(text).isoformat().replace("+00:00", "Z")
    elif kind == "enum":
        value = _option(text.strip(), rules.options, labels or {})
    elif kind == "enum_multi":
        value = [_option(part, rules.options, labels or {}) for part in split_list(text)]
    else:
        value = text
    check_value(value, rules)
    return value
