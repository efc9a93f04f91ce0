"""Values and their columns' types. A time is read tolerantly (`utc_timestamp`: one that is not a
time reads as NULL and never fails a batch, the source being kept whole beside the row); where
DuckDB's casts check values instead, what they refuse is raised as our own error (`refused_values`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

import duckdb

from shipsync.errors import ValueRefusedError


def utc_timestamp(value: object) -> str | None:
    """An ISO-8601 time as a UTC ISO string DuckDB casts to TIMESTAMPTZ; None for anything else
    (a number, an object, a string that is not a time or is out of range). No offset means UTC."""
    if not isinstance(value, str) or not 10 <= len(value) <= 40:
        return None
    try:
        moment = datetime.fromisoformat(value)
        if len(value) == 20 and value[19] == "Z" and value[4] == value[7] == "-" and value[13] == value[16] == ":":
            # The service's own form (`2026-01-05T09:21:57Z`), already UTC to the second: rewritten
            # as text, since `isoformat` on every instant is a large share of a normalization.
            return f"{value[:10]}T{value[11:19]}+00:00"
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return moment.astimezone(UTC).isoformat()
    except (ValueError, OverflowError):
        return None


@contextmanager
def refused_values() -> Iterator[None]:
    """A cast in the block that refuses a value (DuckDB's `DataError`: a conversion, a number out of
    range; its `InvalidInputException`: text that is not JSON) raises `ValueRefusedError`, so that
    callers tell bad data by our error and never by DuckDB's or Python's own."""
    try:
        yield
    except (duckdb.DataError, duckdb.InvalidInputException) as exc:
        raise ValueRefusedError(" ".join(str(exc).split())) from exc
