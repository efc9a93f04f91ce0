"""How the service checks a custom field value against its definition, written from its reference
(spec: "Value formats by data type"; api-facts: values are typed JSON, null clears one): the data
type's format, the definition's options for `enum` and `enum_multi`, and the validation rules it
names (`required`, `pattern`, `max_length`). A value that fails is refused with the reason, which
the routes answer as a 422 at `/data/attributes/value`.

Other rules a definition carries are kept on it and not enforced; so is a known rule whose value
has a type the rule cannot use (a `max_length` of "ten"). This module shares no code with the
client's own checks (`shipsync.values`): the two are written apart so that a test can notice where
they disagree.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from datetime import date, datetime
from typing import Any

# The data types the service's reference enumerates for a definition.
DATA_TYPES = ("short_text", "number", "date", "datetime", "boolean", "enum", "enum_multi", "reference")
# "Flexible parsing" of a date: the forms people write, after the definition's own format.
_DATE_FORMS = ("%Y-%m-%d", "%m/%d/%Y", "%Y/%m/%d", "%d %b %Y", "%b %d, %Y", "%B %d, %Y", "%d %B %Y")
# A definition's `default_format` tokens (`MM/DD/YYYY`) as strptime directives, longest first.
_FORMAT_TOKENS = {"YYYY": "%Y", "YY": "%y", "MM": "%m", "DD": "%d"}


class ValueRefused(ValueError):
    """The value does not fit its definition; the message says why."""


def _text(value: Any, _: Sequence[str], __: str | None) -> str:
    if not isinstance(value, str):
        raise ValueRefused(f"must be a string, not {_json_name(value)}")
    return value


def _number(value: Any, _: Sequence[str], default_format: str | None) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueRefused(f"{value!r} is not a number")
    decimals = len(default_format.rpartition(".")[2]) if default_format and "." in default_format else None
    thousands = "," if default_format and "," in default_format else ""
    return f"{value:{thousands}.{decimals}f}" if decimals is not None else f"{value:{thousands}}"


def _strptime_form(default_format: str) -> str:
    form = default_format
    for token, directive in _FORMAT_TOKENS.items():
        form = form.replace(token, directive)
    return form


def _date(value: Any, _: Sequence[str], default_format: str | None) -> str:
    if not isinstance(value, str):
        raise ValueRefused(f"must be a date string, not {_json_name(value)}")
    forms = ([_strptime_form(default_format)] if default_format else []) + list(_DATE_FORMS)
    for form in forms:
        try:
            day: date = datetime.strptime(value.strip(), form).date()
        except ValueError:
            continue
        return day.isoformat()
    raise ValueRefused(f"{value!r} is not a date" + (f" ({default_format})" if default_format else ""))


def _datetime(value: Any, _: Sequence[str], __: str | None) -> str:
    """An instant: a date, a time and its offset (the reference's `date-time`)."""
    if not isinstance(value, str):
        raise ValueRefused(f"must be a date-time string, not {_json_name(value)}")
    try:
        moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ValueRefused(f"{value!r} is not a date-time (ISO 8601)") from None
    if moment.tzinfo is None:
        raise ValueRefused(f"{value!r} has no UTC offset: it names no instant")
    return moment.isoformat()


def _boolean(value: Any, _: Sequence[str], __: str | None) -> str:
    if not isinstance(value, bool):
        raise ValueRefused(f"must be true or false, not {_json_name(value)}")
    return "true" if value else "false"


def _enum(value: Any, options: Sequence[str], _: str | None) -> str:
    if not isinstance(value, str) or value not in options:
        raise ValueRefused(f"{value!r} is not an option ({', '.join(options) or 'none defined'})")
    return value


def _enum_multi(value: Any, options: Sequence[str], _: str | None) -> str:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueRefused(f"must be an array of option values, not {_json_name(value)}")
    if strangers := [item for item in value if item not in options]:
        raise ValueRefused(f"not options: {', '.join(map(repr, strangers))} ({', '.join(options) or 'none defined'})")
    return ", ".join(value)


CHECKS: dict[str, Callable[[Any, Sequence[str], str | None], str]] = {
    "short_text": _text,
    "number": _number,
    "date": _date,
    "datetime": _datetime,
    "boolean": _boolean,
    "enum": _enum,
    "enum_multi": _enum_multi,
    "reference": _text,  # the id of the record it refers to
}


def _json_name(value: Any) -> str:
    names = {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "an array", dict: "an object"}
    return names.get(type(value), "null")


def _rule(validation: Any, name: str) -> Any:
    return validation.get(name) if isinstance(validation, dict) else None


def _applies_rules(display: str, validation: Any) -> None:
    """`max_length` and `pattern` on the value as text, where the rule's own value is usable."""
    most = _rule(validation, "max_length")
    if isinstance(most, int) and not isinstance(most, bool) and most > 0 and len(display) > most:
        raise ValueRefused(f"is too long ({len(display)} characters; at most {most})")
    pattern = _rule(validation, "pattern")
    if isinstance(pattern, str) and pattern:
        # Python's own engine: the lab's sandbox checks the patterns its users define, on their machine.
        try:
            matches = re.fullmatch(pattern, display) is not None
        except re.error:
            return  # a pattern the service cannot use refuses nothing
        if not matches:
            raise ValueRefused(f"does not match the pattern {pattern}")


def default_value_refusal(value: Any, definition: dict[str, Any]) -> str | None:
    """Why a definition's `default_value` is not a value of its data type (its options aside: a
    new definition has none yet); None when it is one, or null."""
    if value is None or value == "" or value == []:
        return None
    kind = str(definition.get("data_type"))
    if kind in ("enum", "enum_multi"):
        fits = isinstance(value, str) if kind == "enum" else isinstance(value, list) and all(isinstance(v, str) for v in value)
        return None if fits else f"must be {'an option value' if kind == 'enum' else 'an array of option values'}, not {_json_name(value)}"
    check = CHECKS.get(kind)
    if check is None:
        return None
    default_format = definition.get("default_format")
    try:
        check(value, (), default_format if isinstance(default_format, str) and default_format else None)
    except ValueRefused as refused:
        return str(refused)
    return None


def display_value(value: Any, definition: dict[str, Any], options: Sequence[str]) -> str:
    """The value as the service shows it (`display_value`), or ValueRefused.

    `definition` is the definition's attributes; `options` its option values."""
    if value is None or value == "" or value == []:
        if _rule(definition.get("validation"), "required") is True:
            raise ValueRefused("is required")
        return ""
    check = CHECKS.get(str(definition.get("data_type")))
    if check is None:
        raise ValueRefused(f"cannot be checked: unknown data type {definition.get('data_type')!r}")
    default_format = definition.get("default_format")
    display = check(value, options, default_format if isinstance(default_format, str) and default_format else None)
    if definition.get("data_type") in ("short_text", "reference"):
        _applies_rules(display, definition.get("validation"))
    return display
