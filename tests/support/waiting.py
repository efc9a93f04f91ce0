"""Waiting for what happened, not for a time: poll a condition until it holds, within a bound that
only a hung process reaches. A busy machine makes everything slower, never wrong, so no test fails
for being slow; `HANG_S` is the bound a test uses unless it knows better."""

from __future__ import annotations

import time
from typing import Any

HANG_S = 600.0  # a hang guard: what the suite waits for takes seconds, at most a minute, on an idle machine


def wait_for(condition: Any, what: str, timeout_s: float = HANG_S, every_s: float = 0.2) -> Any:
    """Poll `condition()` until it is truthy; its value. AssertionError naming `what` after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, f"hang guard: still waiting for {what} after {timeout_s:.0f} s"
        time.sleep(every_s)
