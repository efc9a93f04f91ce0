"""Unit tests of the sandbox's rate limit (`sandbox.limits`) on a clock the test moves: a rolling
window per API key, refusals counted, and a Retry-After that is enough."""

from __future__ import annotations

from shipsync.api.ratelimit import RateLimit
from shipsync_sandbox.limits import ServerRateLimit


def test_the_window_admits_n_then_refuses_with_a_retry_after_that_is_enough() -> None:
    limit = ServerRateLimit(RateLimit(3, 10))
    assert [limit.check("k", now=t) for t in (0.0, 1.0, 2.0)] == [None, None, None]
    retry_after = limit.check("k", now=2.5)
    assert retry_after == 8  # the first request leaves the window at 10.0: ceil(7.5)
    assert limit.check("k", now=2.5 + retry_after) is None
    assert (limit.admitted, limit.refused) == (4, 1)


def test_keys_have_windows_of_their_own() -> None:
    limit = ServerRateLimit(RateLimit(1, 60))
    assert limit.check("a", now=0.0) is None and limit.check("b", now=0.0) is None
    assert limit.check("a", now=1.0) == 59
    assert limit.refused_by_key == {"a": 1} and limit.admitted_by_key == {"a": 1, "b": 1}


def test_a_retry_after_is_never_zero() -> None:
    limit = ServerRateLimit(RateLimit(1, 1))
    limit.check("k", now=0.0)
    assert limit.check("k", now=0.9999) == 1


def test_no_limit_admits_everything_and_still_counts() -> None:
    limit = ServerRateLimit(None)
    assert all(limit.check("k", now=0.0) is None for _ in range(1000))
    assert (limit.admitted, limit.refused) == (1000, 0)
