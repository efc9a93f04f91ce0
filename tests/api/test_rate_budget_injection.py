"""The shared rate budget is injected: the API client takes a RateBudget from the settings and never
imports Prefect; the entry points attach Prefect's budget unless SHIPSYNC_SHARED_BUDGET is off."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

from shipsync.api import AsyncShipsyncClient
from shipsync.api.ratelimit import RateLimit, RequestLimiter, RollingWindowLimiter
from shipsync.config import load_settings
from shipsync.orchestration.rate_budget import BUSY_PATIENCE_S, PrefectBudgetLimiter, PrefectRateBudget, attach_prefect_budget, bucket_for
from support.clock import FakeClock
from support.waiting import HANG_S


class CountingBudget:
    def __init__(self) -> None:
        self.asked: list[tuple[str, RateLimit | None]] = []
        self.shared = RollingWindowLimiter(RateLimit(5, 1))

    def limiter(self, api_key: str, limit: RateLimit | None) -> RequestLimiter | None:
        self.asked.append((api_key, limit))
        return self.shared


async def test_the_client_draws_from_the_budget_its_settings_carry() -> None:
    budget = CountingBudget()
    settings = load_settings(api_url="http://127.0.0.1:9/v2", api_key="k-1", rate_limit="20/2").with_rate_budget(budget)
    async with AsyncShipsyncClient.from_options(settings.client_options()) as client:
        assert client.transport.limiter is budget.shared
    assert budget.asked == [("k-1", RateLimit(20, 2))]
    # Without a budget the client keeps its process-local limiter.
    async with AsyncShipsyncClient.from_options(load_settings(api_url="http://127.0.0.1:9/v2", api_key="k-1").client_options()) as plain:
        assert plain.transport.limiter is not budget.shared


def test_entry_points_attach_prefect_budget_unless_turned_off() -> None:
    assert isinstance(attach_prefect_budget(load_settings()).rate_budget, PrefectRateBudget)
    assert attach_prefect_budget(load_settings(shared_budget="off")).rate_budget is None
    assert load_settings().rate_budget is None


def test_the_bucket_never_grants_more_than_the_limit_in_a_window() -> None:
    shape = bucket_for(RateLimit(100, 60))
    assert shape.capacity == 10 and shape.capacity + shape.decay_per_second * 60 == 100


def test_the_api_client_does_not_import_prefect() -> None:
    code = "import sys, shipsync.api, shipsync.pull.fetch; print('prefect' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def _refused(status: int) -> Exception:
    """What Prefect raises when its server answers `status` to a draw (after its own retries)."""
    import httpx
    from prefect.concurrency.asyncio import ConcurrencySlotAcquisitionError

    request = httpx.Request("POST", "http://prefect/api/v2/concurrency_limits/increment")
    try:
        raise ConcurrencySlotAcquisitionError("Unable to acquire concurrency slots") from httpx.HTTPStatusError(
            "refused", request=request, response=httpx.Response(status, request=request)
        )
    except ConcurrencySlotAcquisitionError as exc:
        return exc


@pytest.mark.slow
async def test_a_busy_prefect_server_delays_a_request_and_does_not_fail_it() -> None:
    answers = [_refused(503), _refused(503), None]
    drawn: list[str] = []

    async def draw(name: str) -> None:
        drawn.append(name)
        answer = answers.pop(0)
        if answer is not None:
            raise answer

    clock = FakeClock()
    local = RollingWindowLimiter(RateLimit(1, 60), clock)
    limiter = PrefectBudgetLimiter("shipsync-rate-x", local, draw, clock)
    await limiter.acquire()
    assert drawn == ["shipsync-rate-x"] * 3 and clock.slept == [1.0, 2.0]


@pytest.mark.slow
async def test_a_refused_draw_fails_at_once_and_gives_back_the_local_slot() -> None:
    async def draw(name: str) -> None:
        raise _refused(422)

    clock = FakeClock()
    local = RollingWindowLimiter(RateLimit(1, 60), clock)
    limiter = PrefectBudgetLimiter("shipsync-rate-x", local, draw, clock)
    with pytest.raises(Exception, match="Unable to acquire"):
        await limiter.acquire()
    assert clock.slept == []
    # The one local slot is free again after its window: the next request is not starved.
    clock.t += 60
    await asyncio.wait_for(local.acquire(), timeout=HANG_S)  # the fake clock: no real wait


async def test_a_server_busy_for_too_long_fails_the_request() -> None:
    async def draw(name: str) -> None:
        raise _refused(503)

    clock = FakeClock()
    limiter = PrefectBudgetLimiter("shipsync-rate-x", RollingWindowLimiter(RateLimit(5, 1), clock), draw, clock)
    with pytest.raises(Exception, match="Unable to acquire"):
        await limiter.acquire()
    assert sum(clock.slept) >= BUSY_PATIENCE_S
