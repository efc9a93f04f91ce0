"""Custom field value rules: the data types of the spec and the validation rules of a definition.

`check_value` decides whether a typed JSON value is acceptable for a definition and returns its
display form; the sandbox uses it to answer 422s, and bulk validation uses it after turning a
spreadsheet cell into a typed value, so both sides agree on what is valid.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from functools import lru_cache
from typing import Any

from shipsync import patterns

_FORMAT_TOKENS = (("YYYY", "%Y"), ("YY", "%y"), ("MM", "%m"), ("DD", "%d"), ("HH", "%H"), ("mm", "%M"), ("ss", "%S"))


class ValueProblem(ValueError):
    """The value does not fit the definition; the message is the reason, for people."""


@dataclass(frozen=True)
class FieldRules:
    """What a definition demands of a value."""

    data_type: str
    options: tuple[str, ...] = ()
    required: bool = False
    pattern: str | None = None
    max_length: int | None = None
    default_format: str | None = None

    @classmethod
    def of(cls, attributes: dict[str, Any], options: Sequence[str] = ()) -> FieldRules:
        """The rules a definition states. Rules beyond the three known ones are the service's to
        enforce (and kept as given where the definition is stored); a known rule whose value has an
        unexpected type is not enforced here rather than guessed at."""
        validation = attributes.get("validation")
        validation = validation if isinstance(validation, dict) else {}
        default_format = attributes.get("default_format")
        return cls(
            data_type=str(attributes.get("data_type") or "short_text"),
            options=tuple(options),
            required=validation.get("required") is True,
            pattern=_pattern(validation.get("pattern")),
            max_length=whole_number(validation.get("max_length")),
            default_format=default_format if isinstance(default_format, str) and default_format else None,
        )


def whole_number(value: Any) -> int | None:
    """A positive whole number from a rule's value (`12`, `"12"`, `12.0`); None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value > 0 else None
    if isinstance(value, float) and value.is_integer() and value > 0:
        return int(value)
    if isinstance(value, str) and value.strip().isdigit() and int(value) > 0:
        return int(value)
    return None


def _pattern(value: Any) -> str | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        re.compile(value)
    except re.error:
        return None  # a definition's broken pattern is the service's problem, not the value's
    return value


def strptime_format(default_format: str) -> str:
    """Turn a definition's `MM/DD/YYYY`-style format into a strptime format (`%` formats pass)."""
    if "%" in default_format:
        return default_format
    out = default_format
    for token, directive in _FORMAT_TOKENS:
        out = out.replace(token, directive)
    return out


_FLEXIBLE_DATE_FORMATS = (
    "%Y-%m-%d",
    "%Y/%m/%d",
    "%m/%d/%Y",
    "%d.%m.%Y",
    "%d %b %Y",
    "%b %d, %Y",
    "%d %B %Y",
    "%B %d, %Y",
)


@lru_cache(maxsize=65_536)  # spreadsheets repeat dates; strptime is the slow part of validation
def parse_date(text: str, default_format: str | None) -> date:
    """A date through the definition's format first, then flexible parsing; ValueProblem if neither."""
    text = text.strip()
    formats = ([strptime_format(default_format)] if default_format else []) + list(_FLEXIBLE_DATE_FORMATS)
    for fmt in formats:
        try:
            return datetime.strptime(text, fmt).date()
        except ValueError:
            continue
    expected = f" (expected {default_format} or YYYY-MM-DD)" if default_format else " (expected YYYY-MM-DD)"
    raise ValueProblem(f"not a date: {text!r}{expected}")


@lru_cache(maxsize=65_536)
def parse_datetime(text: str) -> datetime:
    try:
        return datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ValueProblem(f"not a date-time: {text!r} (expected ISO 8601, e.g. 2026-05-11T18:30:00Z)") from None


def _check_rules(text: str, rules: FieldRules) -> None:
    if rules.max_length is not None and len(text) > rules.max_length:
        raise ValueProblem(f"too long: {len(text)} characters, at most {rules.max_length}")
    if rules.pattern is not None:
        try:
            matched = patterns.fullmatch(rules.pattern, text)  # RE2, or a time limit: no ReDoS
        except patterns.PatternTooSlow as exc:
            raise ValueProblem(str(exc)) from None
        except re.error:
            matched = True  # a definition's broken pattern is the service's problem, not the value's
        if not matched:
            raise ValueProblem(f"does not match the pattern {rules.pattern}")


def is_empty(value: Any) -> bool:
    return value is None or value == "" or value == []


def check_value(value: Any, rules: FieldRules) -> str:
    """Validate a typed JSON value; return its display value. Raises ValueProblem with the reason."""
    if is_empty(value):
        if rules.required:
            raise ValueProblem("a value is required")
        return ""
    kind = rules.data_type
    if kind in ("short_text", "reference"):
        if not isinstance(value, str):
            raise ValueProblem(f"expected text, got {type(value).__name__}")
        _check_rules(value, rules)
        return value
    if kind == "number":
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise ValueProblem(f"not a number: {value!r}")
        try:
            number = float(value)
        except ValueError:
            raise ValueProblem(f"not a number: {value!r}") from None
        if not math.isfinite(number):
            raise ValueProblem(f"not a finite number: {value!r}")
        return f"{number:,.2f}" if rules.default_format and "." in rules.default_format else f"{number:g}"
    if kind == "date":
        if not isinstance(value, str):
            raise ValueProblem(f"expected a date string, got {type(value).__name__}")
        return parse_date(value, rules.default_format).isoformat()
    if kind == "datetime":
        if not isinstance(value, str):
            raise ValueProblem(f"expected a date-time string, got {type(value).__name__}")
        return parse_datetime(value).isoformat()
    if kind == "boolean":
        if isinstance(value, bool):
            return "Yes" if value else "No"
        if isinstance(value, str) and value in ("true", "false"):
            return "Yes" if value == "true" else "No"
        raise ValueProblem(f"expected true or false, got {value!r}")
    if kind == "enum":
        if not isinstance(value, str) or value not in rules.options:
            raise ValueProblem(f"{value!r} is not an option (options: {', '.join(rules.options) or 'none'})")
        return value
    if kind == "enum_multi":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueProblem("expected a list of option values")
        unknown = [v for v in value if v not in rules.options]
        if unknown:
            raise ValueProblem(f"not options: {', '.join(map(repr, unknown))} (options: {', '.join(rules.options)})")
        return ", ".join(value)
    raise ValueProblem(f"unknown data type {kind!r}")
