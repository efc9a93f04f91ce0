"""What the sandbox stores and serves: JSON:API resource dicts, and their deterministic ids."""

from __future__ import annotations

import uuid
from functools import lru_cache
from typing import Any

Resource = dict[str, Any]
NAMESPACE = uuid.UUID("5b0f1f5e-6d0a-4f43-9a8f-6d1d3c1f2a10")


def stable_id(*parts: object) -> str:
    """A deterministic UUID for a sandbox resource, from its kind and seed-derived parts."""
    return _uuid_of("/".join(str(p) for p in parts))


# A journey asks for the same ids again and again (each delivery's records list the events so far):
# hashing once per name makes simulating a year of journeys a third faster.
@lru_cache(maxsize=1 << 16)
def _uuid_of(name: str) -> str:
    return str(uuid.uuid5(NAMESPACE, name))


def serial_id(base: str, n: int) -> str:
    """The `n`th of a series of ids under one stable id: its first 24 characters (version and variant
    included) and `n` in the last 12, so a series of 100,000 costs no hashing."""
    return f"{base[:24]}{n:012x}"
