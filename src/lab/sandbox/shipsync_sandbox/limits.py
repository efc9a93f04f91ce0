"""The sandbox's rate limits: at most N requests per key in any rolling window of W seconds.

The reference limits creating tracking requests to 100 a minute (`CREATE_LIMIT`); a limit on
every request of a key (the owner's notes: 100 a minute) is an opt-in of the sandbox."""

from __future__ import annotations

import math
import time
from collections import deque
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class RateLimit:
    requests: int
    seconds: float


CREATE_LIMIT = RateLimit(100, 60)


def parse_rate_limit(text: str) -> RateLimit | None:
    """`REQUESTS/SECONDS` (`100/60`); `0` turns the limit off. ValueError otherwise."""
    if text.strip() == "0":
        return None
    requests, slash, seconds = text.partition("/")
    try:
        limit = RateLimit(int(requests), float(seconds)) if slash else None
    except ValueError:
        limit = None
    if limit is None or limit.requests < 1 or limit.seconds <= 0:
        raise ValueError(f"a rate limit is REQUESTS/SECONDS, e.g. 100/60, or 0 for none (not {text!r})")
    return limit


class Now(Protocol):
    """What the window runs on: a test's fake clock lets it cross windows without waiting them out."""

    def now(self) -> float: ...


class MonotonicNow:
    def now(self) -> float:
        return time.monotonic()


class ServerRateLimit:
    """Admits at most N requests per key in any rolling window of W seconds; counts refusals."""

    def __init__(self, limit: RateLimit | None, clock: Now | None = None) -> None:
        self.limit = limit
        self.clock = clock or MonotonicNow()
        self._seen: dict[str, deque[float]] = {}
        self.admitted = 0
        self.refused = 0
        self.admitted_by_key: dict[str, int] = {}
        self.refused_by_key: dict[str, int] = {}

    def check(self, key: str, now: float | None = None) -> int | None:
        """None when admitted (and counted), else the Retry-After in whole seconds."""
        if self.limit is None:
            self._admit(key)
            return None
        now = self.clock.now() if now is None else now
        window = self._seen.setdefault(key, deque())
        while window and window[0] <= now - self.limit.seconds:
            window.popleft()
        if len(window) >= self.limit.requests:
            self.refused += 1
            self.refused_by_key[key] = self.refused_by_key.get(key, 0) + 1
            return max(1, math.ceil(window[0] + self.limit.seconds - now))
        window.append(now)
        self._admit(key)
        return None

    def _admit(self, key: str) -> None:
        self.admitted += 1
        self.admitted_by_key[key] = self.admitted_by_key.get(key, 0) + 1
