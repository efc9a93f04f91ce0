"""Proactive rolling-window rate limiting, shared by every request of the process on one API key.

The service counts requests in a rolling window of W seconds. A request occupies a slot from the
moment it is sent until W seconds after its response arrived: the response time is an upper bound on
when the service counted it, so no window the service can see ever holds more than N requests, and
no safety margin is needed. Thread-safe and loop-agnostic (plain lock, async sleeps), so the sync
facade's portal thread and any event loop share one budget.
"""

from __future__ import annotations

import hashlib
import threading
from collections import deque
from dataclasses import dataclass
from typing import Protocol

from shipsync.api.clock import Clock, MonotonicClock

# While every slot is held by a request still in flight there is no known release time: poll.
_IN_FLIGHT_POLL_S = 0.005


@dataclass(frozen=True)
class RateLimit:
    """At most `requests` requests in any rolling window of `seconds` seconds."""

    requests: int
    seconds: float

    def __str__(self) -> str:
        return f"{self.requests}/{self.seconds:g}"


class RequestLimiter(Protocol):
    async def acquire(self) -> None: ...

    def release(self) -> None: ...

    def pause_until_after(self, seconds: float) -> None: ...


class RateBudget(Protocol):
    """A rate budget shared beyond this process, given to the client by an entry point (the flows'
    is a Prefect global concurrency limit): the limiter for a key, or None when it does not apply."""

    def limiter(self, api_key: str, limit: RateLimit | None) -> RequestLimiter | None: ...


class RollingWindowLimiter:
    """At most `limit.requests` requests in any `limit.seconds` window, as the service sees it."""

    def __init__(self, limit: RateLimit, clock: Clock | None = None) -> None:
        self.limit = limit
        self.clock = clock or MonotonicClock()
        self._lock = threading.Lock()
        self._released: deque[float] = deque()
        self._in_flight = 0
        self._paused_until = 0.0

    def _wait_time(self, now: float) -> float:
        """0 when a slot can be taken now (and takes it), else how long to wait."""
        with self._lock:
            if now < self._paused_until:
                return self._paused_until - now
            window = self.limit.seconds
            while self._released and self._released[0] + window <= now:
                self._released.popleft()
            if self._in_flight + len(self._released) < self.limit.requests:
                self._in_flight += 1
                return 0.0
            if self._released:
                return self._released[0] + window - now
            return _IN_FLIGHT_POLL_S

    async def acquire(self) -> None:
        while True:
            wait = self._wait_time(self.clock.now())
            if wait <= 0:
                return
            await self.clock.sleep(wait)

    def release(self) -> None:
        with self._lock:
            self._in_flight = max(0, self._in_flight - 1)
            self._released.append(self.clock.now())

    def pause_until_after(self, seconds: float) -> None:
        """Honour Retry-After: no request on this key before `seconds` from now."""
        with self._lock:
            self._paused_until = max(self._paused_until, self.clock.now() + seconds)


class UnlimitedLimiter:
    """The limiter when rate limiting is off; still honours Retry-After."""

    def __init__(self, clock: Clock | None = None) -> None:
        self.clock = clock or MonotonicClock()
        self._paused_until = 0.0

    async def acquire(self) -> None:
        wait = self._paused_until - self.clock.now()
        if wait > 0:
            await self.clock.sleep(wait)

    def release(self) -> None:
        return None

    def pause_until_after(self, seconds: float) -> None:
        self._paused_until = max(self._paused_until, self.clock.now() + seconds)


def key_fingerprint(api_key: str) -> str:
    """A stable non-reversible name for a key (for registries and limit names; never the key)."""
    return hashlib.sha256(api_key.encode()).hexdigest()[:16]


_registry_lock = threading.Lock()
_registry: dict[tuple[str, str, RateLimit | None, Clock | None], RequestLimiter] = {}


def shared_limiter(base_url: str, api_key: str, limit: RateLimit | None, clock: Clock | None = None) -> RequestLimiter:
    """The process-wide limiter for this service, key and limit: every client on one key shares it.
    Clients on another `clock` (a test's fake one) share one of their own: their windows run in
    that clock's time, not the process's."""
    name = (base_url.rstrip("/"), key_fingerprint(api_key), limit, clock)
    with _registry_lock:
        limiter = _registry.get(name)
        if limiter is None:
            limiter = RollingWindowLimiter(limit, clock) if limit else UnlimitedLimiter(clock)
            _registry[name] = limiter
        return limiter
