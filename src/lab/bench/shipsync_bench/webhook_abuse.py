"""The probe's slow-body attack as a load generator (issue 27, item 4), and the bench row it gives:
connections that send a signed-looking head, `Content-Length: 100` and one byte, each reopened as
soon as the receiver closes it (a 408, or to make room), while real signed deliveries arrive beside
them, each on a new connection as the service opens them.

Against the receiver before its connection caps made room (a connection mid-body never counted as
idle), 1,000 such connections made every real delivery get 503, for about 3 KB/s of traffic.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import uvloop

from shipsync.serving import stop_process
from shipsync_bench.results import BenchResult, at_least, under
from shipsync_bench.webhook_bench import exchange, notification_body, percentile_ms, receiver_args, receiver_env, serve, signed_request
from shipsync_sandbox.serving import free_port

# A head that passes every check before the body (a well-formed signature, a length under the
# cap), then one byte of the hundred it announces.
TRICKLE = (
    b"POST /webhook HTTP/1.1\r\nHost: receiver\r\nContent-Type: application/json\r\n"
    b"X-T49-Webhook-Signature: " + b"0" * 64 + b"\r\nContent-Length: 100\r\n\r\n{"
)
DELIVERIES_FROM = "127.0.0.1"


@dataclass
class Attack:
    """What the trickling connections did: how many are open now, and how many were opened."""

    open_now: int = 0
    opened: int = 0
    samples: list[int] = field(default_factory=list)  # open_now as each delivery left


async def trickle(port: int, sources: Sequence[str], count: int, attack: Attack, stop: asyncio.Event) -> None:
    """`count` trickling connections to the receiver on `port`, from `sources` in turn (loopback
    addresses: each is a peer of its own), until `stop` is set."""

    async def one(n: int) -> None:
        while not stop.is_set():
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(sources[n % len(sources)], 0))
            except OSError:
                await asyncio.sleep(0.1)
                continue
            attack.open_now += 1
            attack.opened += 1
            try:
                writer.write(TRICKLE)
                while not stop.is_set():  # until the receiver closes it
                    try:
                        if not await asyncio.wait_for(reader.read(4096), 0.5):
                            break
                    except TimeoutError:
                        continue
            except OSError:
                pass
            finally:
                attack.open_now -= 1
                writer.close()

    await asyncio.gather(*(one(n) for n in range(count)))


async def deliver_apart(port: int, requests: Sequence[bytes], interval_s: float, attack: Attack) -> tuple[list[float], list[bytes]]:
    """Each signed request due `interval_s` after the one before, on a new connection from
    DELIVERIES_FROM: the latencies from when each was due (connection included), the status lines."""
    loop = asyncio.get_running_loop()
    start = loop.time()

    async def one(n: int, request: bytes) -> tuple[float, bytes]:
        due = start + n * interval_s
        await asyncio.sleep(due - loop.time())
        attack.samples.append(attack.open_now)
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(DELIVERIES_FROM, 0))
            try:
                status = await exchange(reader, writer, request)
            finally:
                writer.close()
        except OSError as exc:
            status = f"no answer: {exc}".encode()
        return loop.time() - due, status

    answers = await asyncio.gather(*(one(n, request) for n, request in enumerate(requests)))
    return [latency for latency, _ in answers], [status for _, status in answers]


async def deliveries_under_attack(
    port: int, sources: Sequence[str], attackers: int, requests: Sequence[bytes], interval_s: float
) -> tuple[list[float], list[bytes], Attack]:
    """Open the attack, wait until it holds (nearly) all its connections, deliver, then stop it."""
    attack, stop = Attack(), asyncio.Event()
    attacking = asyncio.ensure_future(trickle(port, sources, attackers, attack, stop))
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 30
    while attack.open_now < attackers * 0.95 and loop.time() < deadline:
        await asyncio.sleep(0.1)
    try:
        latencies, statuses = await deliver_apart(port, requests, interval_s, attack)
    finally:
        stop.set()
        await attacking
    return latencies, statuses, attack


def slow_bodies(attackers: int = 1_000, deliveries: int = 200, seconds: float = 20) -> list[BenchResult]:
    """Real deliveries served while `attackers` trickling connections are open, from ten loopback
    addresses (a hundred each: the default cap per peer), for `seconds` (two body deadlines)."""
    sources = [f"127.0.0.{n}" for n in range(2, 12)]
    with tempfile.TemporaryDirectory(prefix="shipsync-bench-", dir="/var/tmp") as tmp:
        port = free_port()
        receiver = serve(receiver_args(port, Path(tmp) / "spool"), port, receiver_env(Path(tmp)))
        try:
            requests = [signed_request(port, notification_body(10_000_000 + n)) for n in range(deliveries)]
            latencies, statuses, attack = uvloop.run(deliveries_under_attack(port, sources, attackers, requests, seconds / deliveries))
        finally:
            stop_process(receiver)
    served = sum(b" 200 " in status for status in statuses)
    held = f"{min(attack.samples):,}-{max(attack.samples):,} (median {statistics.median(attack.samples):,.0f}) open"
    under_attack = f"under {attackers:,} trickling connections"
    return [
        at_least(f"{under_attack}: deliveries acknowledged", served, "deliveries", "sent", deliveries, 1.0),
        under(f"{under_attack}: p99 of a delivery, its connection included", percentile_ms(latencies, 0.99), "ms", 250),
        BenchResult(
            f"{under_attack}: attackers {held} as deliveries left; connections they opened",
            attack.opened,
            "connections",
            "-",
            None,
            None,
            "(context)",
            True,
        ),
    ]
