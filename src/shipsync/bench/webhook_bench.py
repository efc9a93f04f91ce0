"""Receiver benchmarks: durable deliveries per second and acknowledgement latency at concurrency
32 against a no-op handler on the same server stack; and the `events load` rate.

The load generator is a small keep-alive HTTP/1.1 client on asyncio streams in this process, so
that the client is not the bottleneck (httpx at 32 connections is, on this machine).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

from shipsync.bench.results import BenchResult, at_least, under
from shipsync.serving import free_port, wait_until_answers
from shipsync.webhooks.load import load_events
from shipsync.webhooks.signature import sign
from shipsync.webhooks.spool import encode_record

SECRET = "whsec-bench-0001"
CONCURRENCY = 32


def _body(n: int) -> bytes:
    return orjson.dumps(
        {
            "data": {
                "id": f"bench-{n}",
                "type": "webhook_notification",
                "attributes": {"event": "container.transport.vessel_arrived", "created_at": "2026-05-11T18:30:00Z"},
                "relationships": {"reference_object": {"data": {"id": f"te-{n}", "type": "transport_event"}}},
            },
            "included": [{"id": f"te-{n}", "type": "transport_event", "attributes": {"event": "x", "location_locode": "USLAX"}}],
        }
    )


def _request(port: int, body: bytes) -> bytes:
    return (
        f"POST /webhook HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"X-T49-Webhook-Signature: {sign(SECRET, body)}\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode() + body


async def _drive(port: int, requests: list[bytes]) -> tuple[float, list[float], int]:
    queue = list(reversed(requests))
    latencies: list[float] = []
    failures = 0

    async def connection() -> None:
        nonlocal failures
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            while queue:
                request = queue.pop()
                started = time.perf_counter()
                writer.write(request)
                status = await reader.readline()
                length = 0
                while (line := await reader.readline()) not in (b"\r\n", b""):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                await reader.readexactly(length)
                latencies.append(time.perf_counter() - started)
                if b" 200 " not in status:
                    failures += 1
        finally:
            writer.close()

    started = time.perf_counter()
    await asyncio.gather(*(connection() for _ in range(CONCURRENCY)))
    return time.perf_counter() - started, latencies, failures


def _serve(args: list[str], port: int, env: dict[str, str]) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_until_answers(f"http://127.0.0.1:{port}/healthz", process, timeout_s=30)
    return process


def _measure(args: list[str], port: int, env: dict[str, str], count: int) -> tuple[float, float, float]:
    process = _serve(args, port, env)
    try:
        requests = [_request(port, _body(n)) for n in range(count)]
        asyncio.run(_drive(port, requests[: count // 10]))  # warm up
        elapsed, latencies, failures = asyncio.run(_drive(port, requests))
    finally:
        process.terminate()
        process.wait(timeout=10)
    if failures:
        raise RuntimeError(f"{failures} requests were not answered 200")
    latencies.sort()
    return count / elapsed, statistics.median(latencies) * 1000, latencies[int(len(latencies) * 0.99) - 1] * 1000


def receiver_throughput(count: int = 20_000) -> list[BenchResult]:
    with tempfile.TemporaryDirectory(prefix="shipsync-bench-") as tmp:
        env = {**os.environ, "SHIPSYNC_WAREHOUSE": str(Path(tmp) / "w.duckdb"), "PREFECT_SERVER_ANALYTICS_ENABLED": "false"}
        port = free_port()
        ours = _measure(
            [
                sys.executable,
                "-m",
                "shipsync",
                "webhooks",
                "serve",
                "--port",
                str(port),
                "--spool",
                str(Path(tmp) / "spool"),
                "--secret",
                SECRET,
            ],
            port,
            env,
            count,
        )
        port = free_port()
        noop = _measure(
            [
                sys.executable,
                "-m",
                "uvicorn",
                "shipsync.webhooks.receiver:noop_app",
                "--port",
                str(port),
                "--loop",
                "uvloop",
                "--http",
                "httptools",
                "--log-level",
                "warning",
                "--no-access-log",
                "--lifespan",
                "off",
            ],
            port,
            env,
            count,
        )
    return [
        at_least(
            f"receiver durable deliveries/s (concurrency {CONCURRENCY}, fsync before 200)",
            ours[0],
            "req/s",
            "no-op handler, same stack",
            noop[0],
            0.5,
        ),
        under("receiver p99 acknowledgement latency", ours[2], "ms", 50),
        BenchResult(
            "receiver p50 latency (no-op p50 as peer)",
            ours[1],
            "ms",
            "no-op p50",
            noop[1],
            ours[1] / noop[1] if noop[1] else None,
            "(context)",
            True,
        ),
        BenchResult("no-op handler p99 latency", noop[2], "ms", "-", None, None, "(context)", True),
    ]


def events_load_rate(count: int = 100_000) -> list[BenchResult]:
    with tempfile.TemporaryDirectory(prefix="shipsync-bench-") as tmp:
        spool = Path(tmp) / "spool"
        spool.mkdir()
        per_segment = 25_000
        for start in range(0, count, per_segment):
            with (spool / f"segment-{start:020d}-1.spool").open("wb") as out:
                out.write(b"".join(encode_record(_body(n), 0) for n in range(start, min(count, start + per_segment))))
        started = time.perf_counter()
        report = load_events(Path(tmp) / "w.duckdb", spool)
        elapsed = time.perf_counter() - started
    if report.loaded != count:
        raise RuntimeError(f"loaded {report.loaded} of {count}")
    return [at_least(f"events load ({count:,} notifications)", count / elapsed, "events/s", "goal", 20_000, 1.0)]
