"""Pure parts of the client: retry policy, Retry-After parsing, limiter timing with a fake clock."""

from __future__ import annotations

import random
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shipsync.api.ratelimit import RateLimit, RollingWindowLimiter
from shipsync.api.retry import Failure, RetryPolicy, backoff_delay, is_retryable, parse_retry_after, retry_wait
from shipsync.config import parse_rate_limit
from shipsync.errors import ConfigError
from support.clock import FakeClock


@pytest.mark.parametrize(
    ("method", "failure", "status", "expected"),
    [
        ("GET", Failure.STATUS, 429, True),
        ("GET", Failure.STATUS, 502, True),
        ("GET", Failure.STATUS, 503, True),
        ("GET", Failure.STATUS, 504, True),
        ("GET", Failure.STATUS, 500, True),
        ("GET", Failure.STATUS, 404, False),
        ("GET", Failure.LOST, None, True),
        ("GET", Failure.NOT_SENT, None, True),
        ("DELETE", Failure.LOST, None, True),
        ("POST", Failure.STATUS, 429, True),
        ("POST", Failure.NOT_SENT, None, True),
        ("POST", Failure.LOST, None, False),
        ("POST", Failure.STATUS, 503, False),
        ("PATCH", Failure.STATUS, 502, False),
        ("PATCH", Failure.LOST, None, False),
    ],
)
def test_what_is_retried(method: str, failure: Failure, status: int | None, expected: bool) -> None:
    assert is_retryable(method, failure, status) is expected


@given(attempt=st.integers(1, 40), seed=st.integers(0, 2**32))
def test_backoff_is_bounded_and_grows(attempt: int, seed: int) -> None:
    policy = RetryPolicy(base_delay=0.5, max_delay=10)
    delay = backoff_delay(attempt, policy, random.Random(seed))
    ceiling = min(10, 0.5 * 2 ** (attempt - 1))
    assert ceiling / 2 <= delay <= ceiling


@given(seconds=st.floats(0, 10_000, allow_nan=False))
def test_retry_after_is_capped(seconds: float) -> None:
    policy = RetryPolicy(max_retry_after=120)
    assert retry_wait(1, policy, seconds) == min(seconds, 120)


def test_parse_retry_after_forms() -> None:
    now = datetime(2026, 11, 22, 12, 0, 0, tzinfo=UTC)
    assert parse_retry_after("7") == 7
    assert parse_retry_after("Sun, 22 Nov 2026 12:00:30 GMT", now) == 30
    assert parse_retry_after("Sun, 22 Nov 2026 11:00:00 GMT", now) == 0
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None and parse_retry_after(" ") is None


@given(st.text(max_size=40))
def test_parse_retry_after_never_raises(value: str) -> None:
    result = parse_retry_after(value)
    assert result is None or result >= 0


async def test_limiter_window_with_fake_clock() -> None:
    clock = FakeClock()
    limiter = RollingWindowLimiter(RateLimit(3, 10), clock)
    for _ in range(3):
        await limiter.acquire()
        limiter.release()  # released at t=0: slots free again at t=10
    await limiter.acquire()
    assert clock.now() == pytest.approx(10)
    limiter.release()
    limiter.pause_until_after(5)
    await limiter.acquire()
    assert clock.now() == pytest.approx(15)


async def test_limiter_counts_in_flight_requests() -> None:
    clock = FakeClock()
    limiter = RollingWindowLimiter(RateLimit(2, 1), clock)
    await limiter.acquire()
    await limiter.acquire()
    # Both slots are held by requests still in flight: nothing may start until one completes.
    assert limiter._wait_time(clock.now()) > 0
    limiter.release()
    assert limiter._wait_time(clock.now() + 0.999) > 0
    assert limiter._wait_time(clock.now() + 1.0) == 0


def test_rate_limit_setting() -> None:
    assert parse_rate_limit("100/60") == RateLimit(100, 60)
    assert parse_rate_limit("0") is None
    with pytest.raises(ConfigError, match="SHIPSYNC_RATE_LIMIT"):
        parse_rate_limit("fast")
