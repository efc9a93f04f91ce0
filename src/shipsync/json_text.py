"""JSON as the warehouse keeps it in text: one canonical way to write it, one way to read it back."""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

import orjson


def dumps(value: Any) -> str:
    """Canonical JSON text (sorted keys) so that unchanged content compares equal as text; a
    datetime is written in ISO 8601, anything else JSON has no type for (a Decimal) as its `str`."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS, default=str).decode()
    except TypeError:
        # An integer beyond 64 bits, which a response may carry (Python's JSON reads it): Python's
        # JSON writes it exactly, with NaN and infinities as null, as orjson writes them.
        return json.dumps(_finite(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str, allow_nan=False)


def _finite(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value


def dumps_or_null(value: Any) -> str | None:
    """`dumps`, except that None stays None (SQL NULL) instead of the text `null`."""
    return None if value is None else dumps(value)


def loads(value: Any) -> Any:
    """A JSON column's value: text is parsed, anything DuckDB already handed back parsed passes through."""
    return orjson.loads(value) if isinstance(value, str) else value


def read_body(body: bytes) -> Any:
    """A response body as Python's `json.loads` reads it, at orjson's speed: what orjson refuses and
    Python accepts (NaN, integers beyond 64 bits, a UTF-8 byte order mark, lone surrogates) is read
    by Python. Raises ValueError (or RecursionError) for what is not JSON."""
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        return json.loads(body)


def body_key(body: bytes) -> str:
    """What makes two bodies the same notification body: the same bytes, or the same canonical JSON
    (sorted keys, no spacing). Never Python equality, for which `true`, `1` and `1.0` are equal: as
    JSON they are three different bodies."""
    try:
        canonical = orjson.dumps(orjson.loads(body), option=orjson.OPT_SORT_KEYS)
    except (orjson.JSONDecodeError, orjson.JSONEncodeError):
        canonical = body
    return hashlib.sha256(canonical).hexdigest()
