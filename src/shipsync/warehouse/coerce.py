"""Values that fit their column's type, or NULL: one member of an unexpected type (a flag that reads
`"perhaps"`, a count that is a string, a time that is not one) must not fail a whole batch. Used
where the source is kept whole beside the row (the webhook event log keeps every body). Where
DuckDB's casts check values instead, `refused_values` names what they refuse.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import duckdb

from shipsync.errors import ValueRefusedError

_INTEGER_RANGES = {"INTEGER": (-(2**31), 2**31 - 1), "BIGINT": (-(2**63), 2**63 - 1)}


def utc_timestamp(value: object) -> str | None:
    """An ISO-8601 time as a UTC ISO string DuckDB casts to TIMESTAMPTZ; None for anything else
    (a number, an object, a string that is not a time or is out of range). No offset means UTC."""
    if not isinstance(value, str) or not 10 <= len(value) <= 40:
        return None
    try:
        moment = datetime.fromisoformat(value)
        if len(value) == 20 and value[19] == "Z" and value[4] == value[7] == "-" and value[13] == value[16] == ":":
            # The service's own form (`2026-01-05T09:21:57Z`), already UTC to the second: rewritten
            # as text (a fifth of a normalization's time went to `isoformat` here).
            return f"{value[:10]}T{value[11:19]}+00:00"
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return moment.astimezone(UTC).isoformat()
    except (ValueError, OverflowError):
        return None


def fit(sql_type: str, value: Any) -> Any:
    """`value` if it fits a column of `sql_type` (as the staging Arrow types expect it), else None."""
    if value is None:
        return None
    if sql_type == "BOOLEAN":
        return value if isinstance(value, bool) else None
    if sql_type in _INTEGER_RANGES:
        low, high = _INTEGER_RANGES[sql_type]
        return value if isinstance(value, int) and not isinstance(value, bool) and low <= value <= high else None
    if sql_type in ("DOUBLE", "DOUBLE PRECISION"):
        return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
    if sql_type.startswith("TIMESTAMP"):
        return utc_timestamp(value)
    if sql_type == "VARCHAR[]":
        return value if isinstance(value, list) and all(isinstance(v, str) for v in value) else None
    if sql_type == "VARCHAR":
        return value if isinstance(value, str) else None
    return value  # JSON columns hold text serialized by the caller


@contextmanager
def refused_values() -> Iterator[None]:
    """A cast in the block that refuses a value (DuckDB's `DataError`: a conversion, a number out of
    range; its `InvalidInputException`: text that is not JSON) raises `ValueRefusedError`, so that
    callers tell bad data by our error and never by DuckDB's or Python's own."""
    try:
        yield
    except (duckdb.DataError, duckdb.InvalidInputException) as exc:
        raise ValueRefusedError(" ".join(str(exc).split())) from exc
