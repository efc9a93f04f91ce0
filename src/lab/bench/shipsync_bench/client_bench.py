"""Client benchmarks: fetch rate against a bare httpx loop, and use of a scaled rate budget."""

from __future__ import annotations

import asyncio
import statistics
import time

import httpx

from shipsync.api import AsyncShipsyncClient
from shipsync.api.documents import ALL_INCLUDES
from shipsync.api.ratelimit import RateLimit, RollingWindowLimiter
from shipsync_bench.processes import SandboxProcess
from shipsync_bench.results import BenchResult, at_least
from shipsync_sandbox import DEFAULT_API_KEYS

CONCURRENCY = 8
KEY = DEFAULT_API_KEYS[0]


async def _document_ids(api_url: str) -> list[str]:
    async with AsyncShipsyncClient(api_url, KEY, rate_limit=None) as client:
        return [d["id"] async for page in client.documents.list_pages(include=()) for d in page.data]


async def _bare_httpx(api_url: str, ids: list[str]) -> float:
    """The peer: a plain httpx.AsyncClient loop with the same concurrency and the same parsing."""
    semaphore = asyncio.Semaphore(CONCURRENCY)
    include = ",".join(ALL_INCLUDES)
    limits = httpx.Limits(max_connections=CONCURRENCY, max_keepalive_connections=CONCURRENCY)
    async with httpx.AsyncClient(base_url=api_url + "/", headers={"Authorization": f"Token {KEY}"}, limits=limits) as http:

        async def one(doc_id: str) -> None:
            async with semaphore:
                response = await http.get(f"documents/{doc_id}", params={"include": include})
                response.raise_for_status()
                response.json()

        started = time.perf_counter()
        await asyncio.gather(*(one(i) for i in ids))
        return len(ids) / (time.perf_counter() - started)


async def _shipsync(api_url: str, ids: list[str]) -> float:
    async with AsyncShipsyncClient(api_url, KEY, rate_limit=None, concurrency=CONCURRENCY) as client:
        started = time.perf_counter()
        results = await asyncio.gather(*(client.documents.get(i) for i in ids))
        elapsed = time.perf_counter() - started
    assert len(results) == len(ids)
    return len(ids) / elapsed


def fetch_rate(documents: int, rounds: int = 3) -> list[BenchResult]:
    with SandboxProcess("--rate-limit", "0", "--documents", str(documents)) as sandbox:
        ids = asyncio.run(_document_ids(sandbox.api_url))
        asyncio.run(_shipsync(sandbox.api_url, ids[:200]))  # warm both paths the same way
        asyncio.run(_bare_httpx(sandbox.api_url, ids[:200]))
        # Alternate rounds and compare medians: this machine's noise is larger than the difference.
        bare_rates, our_rates = [], []
        for _ in range(rounds):
            bare_rates.append(asyncio.run(_bare_httpx(sandbox.api_url, ids)))
            our_rates.append(asyncio.run(_shipsync(sandbox.api_url, ids)))
    return [
        at_least(
            "client fetch rate (typed documents, every include)",
            statistics.median(our_rates),
            "docs/s",
            "bare httpx loop",
            statistics.median(bare_rates),
            0.8,
        )
    ]


async def _budget_run(api_url: str, limit: RateLimit, windows: int) -> tuple[float, int]:
    starts: list[float] = []
    limiter = RollingWindowLimiter(limit)
    async with AsyncShipsyncClient(api_url, KEY, limiter=limiter, concurrency=CONCURRENCY) as client:

        async def one() -> None:
            await client.metro_areas.get("USLAX")
            starts.append(time.perf_counter())

        await asyncio.gather(*(one() for _ in range(limit.requests * (windows + 1))))
        throttled = client.stats.throttled
    # Over a span D from first to last request, a limit of N per W allows at most N * (D / W + 1)
    # requests: the rate we got is len / (D + W), to be compared with N / W.
    span = max(starts) - min(starts)
    return len(starts) / (span + limit.seconds), throttled


def rate_budget(limit: RateLimit = RateLimit(20, 2), windows: int = 4) -> list[BenchResult]:
    with SandboxProcess("--rate-limit", str(limit), "--documents", "10") as sandbox:
        rate, throttled = asyncio.run(_budget_run(sandbox.api_url, limit, windows))
        refused = sandbox.stats()["refused_429"]
    allowed = limit.requests / limit.seconds
    return [
        at_least(f"rate budget use (sandbox at {limit})", rate, "req/s", "the limit", allowed, 0.95),
        BenchResult(
            "429s received under the limit",
            float(throttled),
            "429s",
            "sandbox refusals",
            float(refused if isinstance(refused, int) else -1),
            None,
            "0",
            throttled == 0 and refused == 0,
        ),
    ]
