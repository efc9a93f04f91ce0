"""A load on a Prefect server like the pipeline's, with every answer counted: concurrent flow runs
that each draw the shared rate budget (a global concurrency limit used as a rate limit, through
`PrefectRateBudget`, as every API request of a flow does), log each request, run a task per batch
and take the warehouse write slot, as pull flows do.

Run it as its own process against the server in PREFECT_API_URL:
`python -m shipsync_bench.prefect_load --flows 8 --requests 60` prints one JSON line: how many API
requests the load made, how many the server answered 503 (busy, to be retried), and how long it took.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import re
import secrets
import time
from collections import Counter
from dataclasses import asdict, dataclass

from shipsync.config import parse_rate_limit

_STATUS = re.compile(r"HTTP/[\d.]+ (\d{3})")
BATCH = 10


@dataclass(frozen=True)
class LoadFigures:
    flow_runs: int
    completed: int
    budget_acquisitions: int
    api_requests: int
    answered_503: int
    seconds: float


class StatusCounter(logging.Handler):
    """Counts the status of every HTTP answer the Prefect client receives (httpx logs one line each)."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.statuses: Counter[int] = Counter()

    def emit(self, record: logging.LogRecord) -> None:
        match = _STATUS.search(record.getMessage())
        if match:
            self.statuses[int(match.group(1))] += 1


async def run_load(flows: int, requests: int, rate: str) -> LoadFigures:
    from prefect import flow, get_run_logger, task

    from shipsync.orchestration.rate_budget import PrefectRateBudget

    key = f"load-{secrets.token_hex(6)}"  # a budget of its own, whatever ran on this server before
    limit = parse_rate_limit(rate)
    budget = PrefectRateBudget()  # one per process, as a worker's flow run has one for its clients

    @task(name="batch")
    def batch(number: int) -> int:
        return number

    @flow(name="budget-load")
    async def budget_load(index: int) -> int:
        limiter = budget.limiter(key, limit)
        assert limiter is not None
        logger = get_run_logger()
        for number in range(requests):
            await limiter.acquire()
            limiter.release()
            logger.info("flow %d request %d", index, number)
            if number % BATCH == BATCH - 1:
                batch(number)
        return requests

    counter = StatusCounter()
    logging.getLogger("httpx").addHandler(counter)
    logging.getLogger("httpx").setLevel(logging.INFO)
    started = time.perf_counter()
    states = await asyncio.gather(*(budget_load(i, return_state=True) for i in range(flows)))
    seconds = time.perf_counter() - started
    completed = sum(1 for state in states if state.is_completed())
    return LoadFigures(flows, completed, flows * requests, sum(counter.statuses.values()), counter.statuses[503], seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--flows", type=int, default=8)
    parser.add_argument("--requests", type=int, default=60, help="budget acquisitions per flow run")
    parser.add_argument("--rate", default="600/6", help="the shared budget, REQUESTS/SECONDS")
    arguments = parser.parse_args()
    figures = asyncio.run(run_load(arguments.flows, arguments.requests, arguments.rate))
    print(json.dumps(asdict(figures)))


if __name__ == "__main__":
    main()
