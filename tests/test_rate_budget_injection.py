"""The shared rate budget is injected: the API client takes a RateBudget from the settings and never
imports Prefect; the entry points attach Prefect's budget unless SHIPSYNC_SHARED_BUDGET is off."""

from __future__ import annotations

import subprocess
import sys

from shipsync.api import AsyncShipsyncClient
from shipsync.api.ratelimit import RequestLimiter, RollingWindowLimiter
from shipsync.config import RateLimit, load_settings
from shipsync.prefect_budget import PrefectRateBudget, attach_prefect_budget, bucket_for


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
    async with AsyncShipsyncClient.from_settings(settings) as client:
        assert client.transport.limiter is budget.shared
    assert budget.asked == [("k-1", RateLimit(20, 2))]
    # Without a budget the client keeps its process-local limiter.
    async with AsyncShipsyncClient.from_settings(load_settings(api_url="http://127.0.0.1:9/v2", api_key="k-1")) as plain:
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
