"""Receiver benchmarks: a burst of signed deliveries at a steady rate, acknowledged durably (the
bar the spool is built for); durable deliveries per second and acknowledgement latency at
concurrency 32 against a no-op handler on the same server stack; the spool's size in lines
against the design it replaced; and the `events load` rate.

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
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import orjson
import uvloop

import shipsync.webhooks
from shipsync.serving import stop_process, wait_until_answers
from shipsync.warehouse_location import lake_location
from shipsync.webhooks.framing import encode_record, read_records
from shipsync.webhooks.load import load_events
from shipsync.webhooks.signature import sign
from shipsync.webhooks.spool import segments
from shipsync.webhooks.writer import SpoolWriter
from shipsync_bench.results import BenchResult, at_least, at_most, under
from shipsync_sandbox.serving import free_port

SECRET = "whsec-bench-0001"
CONCURRENCY = 32  # connections of the load generator (the sender's pool in a burst)


def notification_body(n: int) -> bytes:
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


def signed_request(port: int, body: bytes) -> bytes:
    return (
        f"POST /webhook HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"X-T49-Webhook-Signature: {sign(SECRET, body)}\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode() + body


async def exchange(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes) -> bytes:
    """Send one request on a keep-alive connection and read its answer; the status line."""
    writer.write(request)
    status = await reader.readline()
    length = 0
    while (line := await reader.readline()) not in (b"\r\n", b""):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    await reader.readexactly(length)
    return status


async def _drive(port: int, requests: list[bytes]) -> tuple[float, list[float], int]:
    queue = list(reversed(requests))
    latencies: list[float] = []
    failures = 0

    async def connection() -> None:
        nonlocal failures
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            while queue:
                started = time.perf_counter()
                status = await exchange(reader, writer, queue.pop())
                latencies.append(time.perf_counter() - started)
                if b" 200 " not in status:
                    failures += 1
        finally:
            writer.close()

    started = time.perf_counter()
    await asyncio.gather(*(connection() for _ in range(CONCURRENCY)))
    return time.perf_counter() - started, latencies, failures


async def _at_a_steady_rate(port: int, requests: list[bytes], per_second: float, connections: int) -> tuple[float, list[float], int]:
    """Open loop: request n is due at n / per_second whatever the answers before it, and leaves on
    the keep-alive connection free the longest, of at most `connections` (as a sender's pool; it
    waits for one when all are busy). A latency runs from when the request was due, so a slow
    answer delays nothing and hides nothing (no coordinated omission)."""
    loop = asyncio.get_running_loop()
    pool: asyncio.Queue[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = asyncio.Queue()
    opened = [await asyncio.open_connection("127.0.0.1", port) for _ in range(connections)]
    for connection in opened:
        pool.put_nowait(connection)
    latencies: list[float] = []
    failures = 0
    start = loop.time() + 0.1

    async def send(n: int, request: bytes) -> None:
        nonlocal failures
        due = start + n / per_second
        await asyncio.sleep(due - loop.time())
        connection = await pool.get()
        status = await exchange(*connection, request)
        latencies.append(loop.time() - due)
        failures += b" 200 " not in status
        pool.put_nowait(connection)

    try:
        await asyncio.gather(*(send(n, request) for n, request in enumerate(requests)))
    finally:
        for _, writer in opened:
            writer.close()
    return loop.time() - start, latencies, failures


def serve(args: list[str], port: int, env: dict[str, str]) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_until_answers(f"http://127.0.0.1:{port}/healthz", process, timeout_s=30)
    return process


def percentile_ms(latencies: list[float], share: float) -> float:
    ordered = sorted(latencies)
    return ordered[max(0, int(len(ordered) * share) - 1)] * 1000


def receiver_env(tmp: Path) -> dict[str, str]:
    env = {**os.environ, "SHIPSYNC_WAREHOUSE": str(tmp / "warehouse"), "PREFECT_SERVER_ANALYTICS_ENABLED": "false"}
    return env | {"SHIPSYNC_WEBHOOK_SECRETS": SECRET, "SHIPSYNC_SECRETS_FILE": str(tmp / "secrets.json")}


def receiver_args(port: int, spool: Path, *flags: str) -> list[str]:
    return [sys.executable, "-m", "shipsync", "webhooks", "serve", "--port", str(port), "--spool", str(spool), *flags]


Driver = Callable[[int, list[bytes]], Coroutine[Any, Any, tuple[float, list[float], int]]]


@dataclass
class Measured:
    rates: list[float] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    acknowledged: int = 0
    health: dict[str, Any] = field(default_factory=dict)  # what GET /healthz said at the end

    @property
    def best_rate(self) -> float:
        return max(self.rates)

    def percentile_ms(self, share: float) -> float:
        return percentile_ms(self.latencies, share)


def _measure_interleaved(servers: dict[str, list[str]], env: dict[str, str], count: int, rounds: int, drive: Driver) -> dict[str, Measured]:
    """Rounds alternate between the servers, so that this shared machine's slow spells hit both
    alike; each one's rate per round is kept (in order, for pairing), its latencies are pooled."""
    ports = {name: int(args[args.index("--port") + 1]) for name, args in servers.items()}
    processes = {name: serve(args, ports[name], env) for name, args in servers.items()}
    measured = {name: Measured() for name in servers}
    try:
        for round_ in range(rounds + 1):
            for name, port in ports.items():
                offset = round_ * count  # fresh notification ids every round
                requests = [signed_request(port, notification_body(offset + n)) for n in range(count)]
                elapsed, latencies, failures = uvloop.run(drive(port, requests))
                if failures:
                    raise RuntimeError(f"{name}: {failures} requests were not answered 200")
                measured[name].acknowledged += count
                if round_:  # round 0 warms both up
                    measured[name].rates.append(count / elapsed)
                    measured[name].latencies.extend(latencies)
        for name, port in ports.items():
            measured[name].health = httpx.get(f"http://127.0.0.1:{port}/healthz").json()
    finally:
        for process in processes.values():
            stop_process(process)
    return measured


def _servers(spool: Path) -> dict[str, list[str]]:
    """The receiver, and its peer: a no-op handler on the same stack that stores nothing."""
    noop = [sys.executable, "-m", "uvicorn", "shipsync_bench.noop_receiver:noop_app", "--port", str(free_port())]
    noop += ["--loop", "uvloop", "--http", "httptools", "--log-level", "warning", "--no-access-log", "--lifespan", "off"]
    return {"receiver": receiver_args(free_port(), spool), "no-op": noop}


def receiver_throughput(count: int = 20_000, rounds: int = 5) -> list[BenchResult]:
    """`count` deliveries per round at concurrency 32, `rounds` measured rounds for each server:
    the most the receiver takes, beside the no-op handler in the same rounds (their ratio is the
    median of the per-round ratios: this machine's speed drifts by a quarter within seconds).

    Context only: the spool is built for the burst (`burst`), not for its peak. The sync-helper
    design before it reached 0.5-0.66 of the no-op here; the plain one about half of that in the
    same runs (each sync appends, so the file system journals its new size)."""
    with tempfile.TemporaryDirectory(prefix="shipsync-bench-") as tmp:
        measured = _measure_interleaved(_servers(Path(tmp) / "spool"), receiver_env(Path(tmp)), count, rounds, _drive)
    ours, noop = measured["receiver"], measured["no-op"]
    paired = statistics.median(a / b for a, b in zip(ours.rates, noop.rates, strict=True))
    return [
        BenchResult(
            f"receiver peak throughput / no-op handler's (concurrency {CONCURRENCY}, fsync before 200; median of {rounds} paired rounds)",
            paired,
            "x",
            "no-op handler, same stack",
            1.0,
            paired,
            "(context)",
            True,
        ),
        BenchResult(
            f"receiver durable deliveries/s at concurrency {CONCURRENCY}, best of {rounds} interleaved rounds",
            ours.best_rate,
            "req/s",
            "no-op handler's best",
            noop.best_rate,
            ours.best_rate / noop.best_rate,
            "(context)",
            True,
        ),
        *(
            BenchResult(
                f"receiver p{share * 100:.0f} latency at concurrency {CONCURRENCY} (no-op's as peer)",
                ours.percentile_ms(share),
                "ms",
                f"no-op p{share * 100:.0f}",
                noop.percentile_ms(share),
                ours.percentile_ms(share) / noop.percentile_ms(share),
                "(context)",
                True,
            )
            for share in (0.5, 0.99)
        ),
    ]


def burst(count: int = 10_000, per_second: float = 1_000, rounds: int = 2) -> list[BenchResult]:
    """The spool's bar: after an outage the service redelivers in a burst. `count` signed
    deliveries arrive at `per_second` over a pool of CONCURRENCY connections, each acknowledged
    only once synced; the spool on this machine's disk (not a tmpfs, where a sync costs nothing).
    The no-op handler takes the same bursts in the same rounds: its latency is this machine's."""
    with tempfile.TemporaryDirectory(prefix="shipsync-bench-", dir="/var/tmp") as tmp:
        spool = Path(tmp) / "spool"

        def steadily(port: int, requests: list[bytes]) -> Coroutine[Any, Any, tuple[float, list[float], int]]:
            return _at_a_steady_rate(port, requests, per_second, CONCURRENCY)

        measured = _measure_interleaved(_servers(spool), receiver_env(Path(tmp)), count, rounds, steadily)
        spooled = sum(1 for path in segments(spool) for _ in read_records(path))
    ours, noop = measured["receiver"], measured["no-op"]
    offered = f"{count:,} deliveries at {per_second:,.0f}/s, {rounds} rounds"
    return [
        at_least(f"burst: acknowledgements per second ({offered})", min(ours.rates), "acks/s", "offered rate", per_second, 0.95),
        under(f"burst: p99 acknowledgement latency, from when each was due ({offered})", ours.percentile_ms(0.99), "ms", 100),
        BenchResult(
            "burst: the no-op handler's p99 in the same rounds", noop.percentile_ms(0.99), "ms", "-", None, None, "(context)", True
        ),
        BenchResult(
            "burst: p50 (no-op p50 as peer)", ours.percentile_ms(0.5), "ms", "no-op p50", noop.percentile_ms(0.5), None, "(context)", True
        ),
        at_least(
            f"burst: acknowledged deliveries synced before their 200 ({ours.health['fsyncs']:,} fdatasyncs)",
            min(ours.health["records"], spooled) / ours.acknowledged,
            "x",
            "acknowledged",
            1.0,
            1.0,
        ),
    ]


def spool_alone(count: int = 10_000, per_second: float = 1_000) -> list[BenchResult]:
    """The burst's records appended straight to a writer in this process, at the same rate and
    with the same latency clock, without HTTP: what the spool itself adds (on a busy machine the
    HTTP side's share of the CPU, which the no-op handler pays too, weighs more)."""

    async def appended(writer: SpoolWriter) -> list[float]:
        loop = asyncio.get_running_loop()
        await writer.append(encode_record(notification_body(-1), 0))  # the segment exists
        start, latencies = loop.time() + 0.05, []

        async def one(n: int) -> None:
            due = start + n / per_second
            await asyncio.sleep(due - loop.time())
            await writer.append(encode_record(notification_body(n), 0))
            latencies.append(loop.time() - due)

        await asyncio.gather(*(one(n) for n in range(count)))
        return latencies

    with tempfile.TemporaryDirectory(prefix="shipsync-bench-", dir="/var/tmp") as tmp:
        writer = SpoolWriter(Path(tmp) / "spool")
        try:
            latencies = uvloop.run(appended(writer))
        finally:
            writer.close()
    median = percentile_ms(latencies, 0.5)
    name = f"spool alone: {count:,} appends at {per_second:,.0f}/s, p99 until synced ({writer.fsyncs:,} fdatasyncs; p50 {median:.1f} ms)"
    return [under(name, percentile_ms(latencies, 0.99), "ms", 100)]


# The spool as it was before the plain writer: a sync-helper child process and group commit over
# pre-zeroed extents (the last commit with it on main).
SPOOL_BEFORE = ("bc176ec", ("framing.py", "spool.py", "writer.py", "sync_helper.py"))
SPOOL_NOW = ("framing.py", "spool.py", "writer.py")


def spool_lines() -> list[BenchResult]:
    """Lines of the spool's modules (framing, folder, writer) now, beside those of the design it
    replaced, read from the repository's history when there is one."""
    package = Path(shipsync.webhooks.__file__).parent
    now = sum(len((package / name).read_text().splitlines()) for name in SPOOL_NOW)
    commit, names = SPOOL_BEFORE
    try:
        texts = [
            subprocess.run(["git", "show", f"{commit}:./{name}"], cwd=package, capture_output=True, text=True, check=True).stdout
            for name in names
        ]
    except (OSError, subprocess.CalledProcessError):
        return [
            BenchResult(
                "spool lines (framing, folder, writer)", now, "lines", f"before ({commit}): no history here", None, None, "(context)", True
            )
        ]
    before = sum(len(text.splitlines()) for text in texts)
    return [at_most("spool lines (framing, folder, writer)", now, "lines", f"before ({commit}, with the sync helper)", before, 1.0)]


def events_load_rate(count: int = 100_000) -> list[BenchResult]:
    with tempfile.TemporaryDirectory(prefix="shipsync-bench-") as tmp:
        spool = Path(tmp) / "spool"
        spool.mkdir()
        per_segment = 25_000
        for start in range(0, count, per_segment):
            with (spool / f"segment-{start:020d}-1.spool").open("wb") as out:
                out.write(b"".join(encode_record(notification_body(n), 0) for n in range(start, min(count, start + per_segment))))
        started = time.perf_counter()
        report = load_events(lake_location(str(Path(tmp) / "warehouse")), spool)
        elapsed = time.perf_counter() - started
    if report.loaded != count:
        raise RuntimeError(f"loaded {report.loaded} of {count}")
    return [at_least(f"events load ({count:,} notifications)", count / elapsed, "events/s", "goal", 20_000, 1.0)]
