"""JSON as the warehouse keeps it in text: one canonical way to write it, one way to read it back."""

from __future__ import annotations

from typing import Any

import orjson


def dumps(value: Any) -> str:
    """Canonical JSON text (sorted keys) so that unchanged content compares equal as text; a
    datetime is written in ISO 8601, anything else JSON has no type for (a Decimal) as its `str`."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS, default=str).decode()


def dumps_or_null(value: Any) -> str | None:
    """`dumps`, except that None stays None (SQL NULL) instead of the text `null`."""
    return None if value is None else dumps(value)


def loads(value: Any) -> Any:
    """A JSON column's value: text is parsed, anything DuckDB already handed back parsed passes through."""
    return orjson.loads(value) if isinstance(value, str) else value
