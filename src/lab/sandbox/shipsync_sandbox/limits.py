"""The sandbox's enforcement of the service's rate limit: a rolling window per API key."""

from __future__ import annotations

import math
from collections import deque

from shipsync.api.clock import Clock, MonotonicClock
from shipsync.config import RateLimit


class ServerRateLimit:
    """Admits at most N requests per key in any rolling window of W seconds; counts refusals."""

    def __init__(self, limit: RateLimit | None, clock: Clock | None = None) -> None:
        self.limit = limit
        self.clock = clock or MonotonicClock()
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
