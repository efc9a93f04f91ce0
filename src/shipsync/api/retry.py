"""The retry policy as pure functions: what may be retried, how long to wait, and Retry-After.

A GET or DELETE is idempotent and retried on 429, 500, 502, 503, 504, timeouts and connection errors
(500 too: repeating an idempotent read is harmless, and a 500 under load is usually transient). A
POST or PATCH is retried only when the service provably did not act: the connection failed before
the request was sent, or the answer was 429. Anything else on a write is an unknown outcome.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from enum import Enum

IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "DELETE"})
RETRYABLE_STATUSES = frozenset({429, 500, 502, 503, 504})


class Failure(Enum):
    """What went wrong with one attempt, as far as retry decisions care."""

    NOT_SENT = "not_sent"  # connection refused / connect timeout / pool timeout: nothing reached the service
    LOST = "lost"  # sent, then timeout or connection lost: the service may have acted
    STATUS = "status"  # an HTTP answer with an error status


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 5
    base_delay: float = 0.25
    max_delay: float = 20.0
    max_retry_after: float = 120.0


def is_retryable(method: str, failure: Failure, status: int | None = None) -> bool:
    """Whether this attempt's failure may be retried for this method."""
    method = method.upper()
    if failure is Failure.NOT_SENT:
        return True
    if failure is Failure.STATUS and status == 429:
        return True
    if method not in IDEMPOTENT_METHODS:
        return False
    if failure is Failure.LOST:
        return True
    return status in RETRYABLE_STATUSES


def backoff_delay(attempt: int, policy: RetryPolicy, rng: random.Random | None = None) -> float:
    """Full-jitter exponential backoff for retry number `attempt` (1-based)."""
    ceiling = min(policy.max_delay, policy.base_delay * (2 ** max(0, attempt - 1)))
    return (rng or random).uniform(ceiling / 2, ceiling)


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or HTTP date); None if absent/bad."""
    if value is None:
        return None
    text = value.strip()
    if not text:
        return None
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def retry_wait(
    attempt: int,
    policy: RetryPolicy,
    retry_after: float | None,
    rng: random.Random | None = None,
) -> float:
    """How long to wait before retry `attempt`: Retry-After (capped) when given, else backoff."""
    if retry_after is not None:
        return min(retry_after, policy.max_retry_after)
    return backoff_delay(attempt, policy, rng)
