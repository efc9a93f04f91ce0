"""A clock for tests of the limiter and retry timing: sleeping advances it at once, and each sleep is
recorded (the product's clocks are in `shipsync.api.clock`)."""

from __future__ import annotations

import asyncio


class FakeClock:
    """Manual time for tests: sleeping advances the clock at once."""

    def __init__(self, start: float = 0.0) -> None:
        self.t = start
        self.slept: list[float] = []

    def now(self) -> float:
        return self.t

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.t += max(0.0, seconds)
        await asyncio.sleep(0)
