"""JSON as the warehouse keeps it in text: one canonical way to write it, one way to read it back."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import msgspec
import orjson


def dumps(value: Any) -> str:
    """Canonical JSON text (sorted keys) so that unchanged content compares equal as text; a
    datetime is written in ISO 8601, anything else JSON has no type for (a Decimal) as its `str`."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS, default=str).decode()
    except orjson.JSONEncodeError as exc:
        if "64-bit" not in str(exc):
            raise
        # An integer beyond 64 bits, which a response may carry (`read_body` reads it exactly):
        # written as its digits, everything else as orjson writes it.
        return orjson.dumps(_big_integers_as_digits(value), option=orjson.OPT_SORT_KEYS, default=str).decode()


def _big_integers_as_digits(value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**64:
        return orjson.Fragment(str(value))
    if isinstance(value, dict):
        return {key: _big_integers_as_digits(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_big_integers_as_digits(item) for item in value]
    return value


def dumps_or_null(value: Any) -> str | None:
    """`dumps`, except that None stays None (SQL NULL) instead of the text `null`."""
    return None if value is None else dumps(value)


def loads(value: Any) -> Any:
    """A JSON column's value: text is parsed (exactly, as `read_strict`), anything DuckDB already
    handed back parsed passes through."""
    return read_strict(value) if isinstance(value, str) else value


_DECODER = msgspec.json.Decoder()


def read_strict(text: bytes | str) -> Any:
    """Strict JSON (no NaN, no byte order mark, valid UTF-8), integers of any size exact (orjson
    turns those beyond 64 bits into floats). Raises ValueError for anything else."""
    try:
        return _DECODER.decode(text)
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8: {exc}") from None


def read_body(body: bytes) -> Any:
    """A response body exactly as Python's `json.loads` reads it, faster: `read_strict` reads it, and
    what that refuses but Python accepts (NaN, numbers out of a float's range, a byte order mark,
    UTF-16, surrogates) is read by Python. Raises ValueError (or RecursionError) for what is not JSON."""
    try:
        return read_strict(body)
    except ValueError:
        return json.loads(body)


def body_key(body: bytes) -> str:
    """What makes two bodies the same notification body: the same bytes, or the same canonical JSON
    (sorted keys, no spacing). Never Python equality, for which `true`, `1` and `1.0` are equal: as
    JSON they are three different bodies."""
    try:
        canonical = dumps(read_strict(body)).encode()  # integers beyond 64 bits kept, not rounded
    except (ValueError, orjson.JSONEncodeError):
        canonical = body
    return hashlib.sha256(canonical).hexdigest()
