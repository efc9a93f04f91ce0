"""One rate budget per API key across every worker: a Prefect global concurrency limit used as a
rate limit, drawn from before each request when a Prefect server is configured. The entry points
(flows, CLI) attach it to the settings (`attach_prefect_budget`); the API client only sees a
`RateBudget`, so it never imports Prefect.

Prefect's limit is a token bucket: `limit` slots, each occupied slot freed at `slot_decay_per_second`.
A bucket of capacity C refilling at r grants at most C + r*W requests in any window of W seconds, so
C = N/10 and r = (N - C)/W keep every window at or under the service's N per W for all processes
together. The in-process rolling limiter still runs beside it (timing, Retry-After pauses).
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from shipsync.api.clock import Clock, MonotonicClock
from shipsync.api.ratelimit import RateLimit, RequestLimiter, RollingWindowLimiter, key_fingerprint
from shipsync.config import Settings

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BucketShape:
    capacity: int
    decay_per_second: float


def bucket_for(limit: RateLimit) -> BucketShape:
    capacity = max(1, limit.requests // 10)
    return BucketShape(capacity, (limit.requests - capacity) / limit.seconds)


def budget_name(api_key: str) -> str:
    return f"shipsync-rate-{key_fingerprint(api_key)}"


def prefect_api_configured() -> bool:
    try:
        from prefect.settings import get_current_settings
    except ImportError:
        return False
    return bool(get_current_settings().api.url)


def ensure_limit(name: str, capacity: int, decay_per_second: float = 0.0) -> None:
    """Create the global concurrency limit `name`, or reshape it to this capacity and decay (slots
    freed per second: a rate limit; 0: slots held until released)."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import GlobalConcurrencyLimitCreate, GlobalConcurrencyLimitUpdate
    from prefect.exceptions import ObjectAlreadyExists, ObjectNotFound

    decay = float(decay_per_second)
    with get_client(sync_client=True) as client:
        try:
            current = client.read_global_concurrency_limit_by_name(name)
        except ObjectNotFound:
            # Another worker may create it between our read and our create, with the same shape.
            with contextlib.suppress(ObjectAlreadyExists):
                client.create_global_concurrency_limit(
                    GlobalConcurrencyLimitCreate(name=name, limit=capacity, slot_decay_per_second=decay, active=True)
                )
        else:
            if current.limit != capacity or abs((current.slot_decay_per_second or 0) - decay_per_second) > 1e-9:
                client.update_global_concurrency_limit(name, GlobalConcurrencyLimitUpdate(limit=capacity, slot_decay_per_second=decay))


def ensure_budget(name: str, limit: RateLimit) -> None:
    """The budget's limit: a bucket shaped for `limit` (see the module's docstring)."""
    shape = bucket_for(limit)
    ensure_limit(name, shape.capacity, shape.decay_per_second)


# A Prefect server on SQLite answers 503 while its file is locked by another writer (Prefect's
# client has already retried it for a while by then); a request waits this long more, then fails the run.
BUSY_PATIENCE_S = 300.0
BUSY_BACKOFF_S = (1.0, 2.0, 5.0, 10.0, 20.0, 30.0)


def draw_from_prefect(name: str) -> Awaitable[None]:
    """One slot of the global concurrency limit `name`, used as a rate limit."""
    from prefect.concurrency.asyncio import rate_limit

    return rate_limit(name, occupy=1, strict=True)


def server_busy(exc: BaseException) -> bool:
    """Whether Prefect refused a draw because its server was busy or unreachable (worth waiting)."""
    import httpx
    from prefect.concurrency.asyncio import ConcurrencySlotAcquisitionError

    cause = exc.__cause__
    if not isinstance(exc, ConcurrencySlotAcquisitionError):
        return False
    if isinstance(cause, httpx.HTTPStatusError):
        return cause.response.status_code in (502, 503, 504)
    return isinstance(cause, httpx.TransportError)


class PrefectBudgetLimiter:
    """A RequestLimiter that takes a slot of the shared Prefect budget, then the local limiter's.

    A busy Prefect server delays the request (up to BUSY_PATIENCE_S, logged) instead of failing it.
    """

    def __init__(
        self, name: str, local: RequestLimiter, draw: Callable[[str], Awaitable[None]] = draw_from_prefect, clock: Clock | None = None
    ) -> None:
        self.name = name
        self.local = local
        self._draw = draw
        self._clock = clock or MonotonicClock()

    async def acquire(self) -> None:
        await self.local.acquire()
        try:
            await self._draw_patiently()
        except BaseException:
            self.local.release()  # the local slot taken for a request that will not be sent
            raise

    async def _draw_patiently(self) -> None:
        give_up_at = self._clock.now() + BUSY_PATIENCE_S
        for attempt in itertools.count():
            try:
                await self._draw(self.name)
                return
            except Exception as exc:
                if not server_busy(exc) or self._clock.now() >= give_up_at:
                    raise
                pause = BUSY_BACKOFF_S[min(attempt, len(BUSY_BACKOFF_S) - 1)]
                log.warning("the Prefect server is busy (%s); drawing from the rate budget again in %.0f s", exc, pause)
                await self._clock.sleep(pause)

    def release(self) -> None:
        self.local.release()

    def pause_until_after(self, seconds: float) -> None:
        self.local.pause_until_after(seconds)


class PrefectRateBudget:
    """The RateBudget of a Prefect server: one limiter per key and limit, shared by every client made
    from the settings that carry this budget (an entry point attaches one: a flow run, a command)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._limiters: dict[tuple[str, RateLimit], PrefectBudgetLimiter] = {}

    def limiter(self, api_key: str, limit: RateLimit | None) -> RequestLimiter | None:
        """The cross-worker limiter for this key, or None without a limit or a Prefect server."""
        if limit is None or not prefect_api_configured():
            return None
        name = budget_name(api_key)
        with self._lock:
            if (name, limit) not in self._limiters:
                ensure_budget(name, limit)
                self._limiters[name, limit] = PrefectBudgetLimiter(name, RollingWindowLimiter(limit))
            return self._limiters[name, limit]


def attach_prefect_budget(settings: Settings) -> Settings:
    """`settings` whose clients draw from the Prefect budget, unless SHIPSYNC_SHARED_BUDGET turns it off.

    Cheap: Prefect is imported only when a client is made, and only if a Prefect API is configured.
    """
    if settings.shared_budget != "auto":
        return settings
    return settings.with_rate_budget(PrefectRateBudget())
