"""Unit tests of the client's rate limiting (`api.ratelimit`) through `httpx.MockTransport` on a fake
clock: the budget spaces requests, a 429's Retry-After pauses every request on the key, and no test
waits in real time."""

from __future__ import annotations

import httpx

from shipsync.api import AsyncShipsyncClient
from shipsync.api.ratelimit import RateLimit, RollingWindowLimiter, UnlimitedLimiter, shared_limiter
from shipsync.api.retry import RetryPolicy
from support.clock import FakeClock

METRO = {"data": {"id": "USLAX", "type": "metro_area", "attributes": {"name": "Los Angeles"}}}


def service(answers: list[httpx.Response], sent_at: list[float], clock: FakeClock) -> httpx.MockTransport:
    def handle(request: httpx.Request) -> httpx.Response:
        sent_at.append(clock.now())
        return answers.pop(0) if answers else httpx.Response(200, json=METRO)

    return httpx.MockTransport(handle)


async def test_requests_beyond_the_budget_wait_for_the_window_on_the_clock() -> None:
    clock, sent_at = FakeClock(), []
    limiter = RollingWindowLimiter(RateLimit(2, 10), clock)
    async with AsyncShipsyncClient(
        "https://api.test/v2", "k", limiter=limiter, http_transport=service([], sent_at, clock), clock=clock
    ) as client:
        for _ in range(5):
            await client.metro_areas.get("USLAX")
    assert sent_at == [0, 0, 10, 10, 20]


async def test_a_429_pauses_the_key_for_its_retry_after_then_the_request_succeeds() -> None:
    clock, sent_at = FakeClock(), []
    limiter = RollingWindowLimiter(RateLimit(100, 60), clock)
    refused = httpx.Response(429, headers={"Retry-After": "7"}, json={"errors": [{"status": "429", "title": "Too many"}]})
    policy = RetryPolicy(max_retries=3, base_delay=0.01, max_delay=0.2)
    async with AsyncShipsyncClient(
        "https://api.test/v2", "k", limiter=limiter, policy=policy, http_transport=service([refused], sent_at, clock), clock=clock
    ) as client:
        metro = await client.metro_areas.get("USLAX")
        assert client.stats.throttled == 1
    assert metro is not None
    assert len(sent_at) == 2 and sent_at[1] - sent_at[0] >= 7


async def test_without_a_limit_a_retry_after_still_holds_back_the_next_request() -> None:
    clock = FakeClock(start=100.0)
    limiter = UnlimitedLimiter(clock)
    await limiter.acquire()
    limiter.pause_until_after(3)
    await limiter.acquire()
    assert clock.now() == 103.0 and clock.slept == [3.0]


def test_clients_on_one_key_and_limit_share_one_budget() -> None:
    one = shared_limiter("https://api.test/v2/", "key-a", RateLimit(5, 1))
    assert shared_limiter("https://api.test/v2", "key-a", RateLimit(5, 1)) is one
    assert shared_limiter("https://api.test/v2", "key-b", RateLimit(5, 1)) is not one
    assert shared_limiter("https://api.test/v2", "key-a", RateLimit(6, 1)) is not one
