"""The receiver's HTTP limits over real sockets, through `shipsync webhooks serve` and its flags:
idle and slow connections are closed, and trickling cannot extend a deadline; floods of them, or
the probe's slow-body attack, never lock a delivery out, from another peer or the same one; a
peer's cap closes its own connections; oversized heads are cut off cheaply, and a body without a
signature header is never read."""

from __future__ import annotations

import contextlib
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import orjson
import pytest
import uvloop

from shipsync.serving import stop_process, wait_until_answers
from shipsync.webhooks.signature import sign
from shipsync_bench.webhook_abuse import deliveries_under_attack
from shipsync_sandbox.serving import free_port
from support.waiting import HANG_S, wait_for

SECRET = "whsec-limits-test-0001"
# Real `webhooks serve` processes, and timeouts waited out over real sockets.
pytestmark = pytest.mark.slow


@dataclass
class Served:
    port: int
    process: subprocess.Popen[bytes]

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def deliver(self, notification_id: str) -> int:
        body = orjson.dumps({"data": {"id": notification_id, "type": "webhook_notification", "attributes": {"event": "x"}}})
        headers = {"X-T49-Webhook-Signature": sign(SECRET, body)}
        return httpx.post(f"http://127.0.0.1:{self.port}/webhook", content=body, headers=headers, timeout=10).status_code

    def connect(self, source: str = "127.0.0.1") -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.port), source_address=(source, 0))

    def rss_mb(self) -> float:
        return int(Path(f"/proc/{self.process.pid}/status").read_text().split("VmRSS:")[1].split()[0]) / 1024


def serve(tmp: Path, *flags: str) -> Iterator[Served]:
    port = free_port()
    env = {**os.environ, "SHIPSYNC_WEBHOOK_SECRETS": SECRET, "SHIPSYNC_WAREHOUSE": str(tmp / "w")}
    command = [sys.executable, "-m", "shipsync", "webhooks", "serve", "--port", str(port), "--spool", str(tmp / "spool"), *flags]
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until_answers(f"http://127.0.0.1:{port}/healthz", process, timeout_s=HANG_S)
        yield Served(port, process)
    finally:
        stop_process(process)


@pytest.fixture(scope="module")
def default_limits(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    yield from serve(tmp_path_factory.mktemp("default"))


@pytest.fixture(scope="module")
def loose_limits(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """Timeouts that no test reaches: what tight_limits closes, this one keeps open."""
    flags = ["--header-timeout", "3600", "--idle-timeout", "3600", "--body-timeout", "3600"]
    yield from serve(tmp_path_factory.mktemp("loose"), *flags)


@pytest.fixture(scope="module")
def tight_limits(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    flags = ["--header-timeout", "1", "--idle-timeout", "1", "--body-timeout", "1", "--max-connections", "50", "--max-headers", "20"]
    yield from serve(tmp_path_factory.mktemp("tight"), *flags, "--max-header-bytes", "4096")


# A head that passes every check made before the body: a well-formed signature, a length.
SIGNED_HEAD = b"POST /webhook HTTP/1.1\r\nHost: x\r\nX-T49-Webhook-Signature: " + b"0" * 64 + b"\r\nContent-Length: %d\r\n\r\n"


def answer(sock: socket.socket, wait_s: float = HANG_S, *, silence_is_fine: bool = False) -> bytes:
    """What the server sends before it closes (b"" if it closes without a word). A server that has
    not closed after `wait_s` fails the test (a hang guard), unless `silence_is_fine`."""
    sock.settimeout(wait_s)
    data = b""
    try:
        while chunk := sock.recv(4096):
            data += chunk
    except ConnectionResetError:
        pass
    except TimeoutError:
        assert silence_is_fine, f"hang guard: the server neither answered nor closed within {wait_s:.0f} s (got {data[:80]!r})"
    return data


def open_idle(served: Served, count: int) -> list[socket.socket]:
    """Connections that never finish a request: half send nothing, half a partial head."""
    sockets = []
    for n in range(count):
        sock = served.connect()
        if n % 2:
            sock.sendall(b"POST /webhook HTTP/1.1\r\nHost: x\r\n")
        sockets.append(sock)
    return sockets


def closed(sock: socket.socket) -> bool:
    sock.settimeout(0.01)
    try:
        return sock.recv(4096, socket.MSG_PEEK) == b"" or sock.recv(4096).startswith(b"HTTP/1.1 ")
    except TimeoutError:
        return False
    except OSError:
        return True


def test_300_idle_connections_never_lock_a_delivery_out(default_limits: Served, tight_limits: Served) -> None:
    for served in (default_limits, tight_limits):  # a limit of 1000 connections, and of 50
        idle = open_idle(served, 300)
        time.sleep(0.2)
        assert served.deliver(f"after-300-idle-{served.port}") == 200
        if served is tight_limits:
            # At the limit, each new connection closed the longest-idle one, and then the timeouts came.
            wait_for(lambda: all(closed(sock) for sock in idle), "the idle connections to be closed")  # noqa: B023
        for sock in idle:
            sock.close()


def test_idle_and_slow_connections_are_closed(tight_limits: Served, loose_limits: Served) -> None:
    """Closed by the 1 s timeouts the flags set: the same connections to a server whose timeouts
    are an hour are all still open once the tight server has closed its three."""
    opened = {}
    for served in (loose_limits, tight_limits):
        silent, slow_head, slow_body = served.connect(), served.connect(), served.connect()
        slow_head.sendall(b"POST /webhook HTTP/1.1\r\nHost: x\r\n")
        slow_body.sendall(SIGNED_HEAD % 100 + b"{")
        opened[served.port] = (silent, slow_head, slow_body)
    silent, slow_head, slow_body = opened[tight_limits.port]
    assert answer(silent) == b""  # nothing to answer: closed after the idle timeout
    assert answer(slow_head).startswith(b"HTTP/1.1 408")
    assert answer(slow_body).startswith(b"HTTP/1.1 408")
    assert not any(closed(sock) for sock in opened[loose_limits.port])
    for sock in opened[loose_limits.port]:
        sock.close()
    # A keep-alive connection with nothing more to send is closed after the idle timeout too.
    with tight_limits.connect() as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        assert answer(sock).startswith(b"HTTP/1.1 200")


def test_a_128_mib_header_is_cut_off_cheaply(default_limits: Served) -> None:
    cpu_before = default_limits.cpu_seconds()
    with default_limits.connect() as sock:
        head = b"POST /webhook HTTP/1.1\r\nHost: x\r\nX-Huge: "

        def send_all() -> None:
            try:
                sock.sendall(head)
                chunk = b"a" * (1024 * 1024)
                for _ in range(128):
                    sock.sendall(chunk)
            except OSError:
                pass  # the server stopped reading: what we want

        sender = threading.Thread(target=send_all)
        sender.start()
        reply = answer(sock)
        sender.join(timeout=HANG_S)
    assert reply.startswith(b"HTTP/1.1 431")
    assert default_limits.cpu_seconds() - cpu_before < 1.0
    assert default_limits.deliver("after-the-huge-header") == 200


def test_too_many_headers_and_too_long_a_head_are_431(tight_limits: Served) -> None:
    with tight_limits.connect() as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\n" + b"".join(b"X-%d: y\r\n" % n for n in range(25)) + b"\r\n")
        assert answer(sock).startswith(b"HTTP/1.1 431")
    with tight_limits.connect() as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nX-Long: " + b"b" * 5000 + b"\r\n\r\n")
        assert answer(sock).startswith(b"HTTP/1.1 431")
    # A request just under the limits, its body in the same chunk, is served.
    with tight_limits.connect() as sock:
        sock.sendall(
            b"GET /healthz HTTP/1.1\r\n" + b"".join(b"X-%d: y\r\n" % n for n in range(19)) + b"X-Pad: " + b"p" * 3000 + b"\r\n\r\n"
        )
        assert answer(sock).startswith(b"HTTP/1.1 200")
    assert tight_limits.deliver("after-the-refusals") == 200


def test_a_trickle_of_bytes_does_not_extend_a_deadline(tight_limits: Served) -> None:
    """One byte every 0.2 s at most: each deadline (1 s here) runs from the request's first byte, or
    from the end of its head, and no byte moves it. The trickles last 40 s and 20 s; a deadline
    that a byte moved would let each run to its end, so the 408 comes with bytes still unsent."""

    def trickled(prefix: bytes, then: bytes) -> int:
        """How many bytes of `then` were sent before the server answered."""
        sent = 0
        with tight_limits.connect() as sock:
            sock.sendall(prefix)
            started = time.monotonic()
            sock.settimeout(0.2)
            for byte in then:
                try:
                    sock.sendall(bytes([byte]))
                    sent += 1
                    if sock.recv(4096, socket.MSG_PEEK):
                        break
                except TimeoutError:
                    continue
                except OSError:
                    break
            assert answer(sock).startswith(b"HTTP/1.1 408")
            assert time.monotonic() - started >= 0.9  # not before the deadline
        return sent

    head = b"OST /webhook HTTP/1.1\r\nHost: x\r\n" + b"X-Pad: " + b"p" * 200
    assert trickled(b"P", head) < len(head)
    assert trickled(SIGNED_HEAD % 100, b"{" * 99) < 99


def test_a_body_without_a_signature_header_is_never_read(default_limits: Served) -> None:
    """Refused at the end of its head (401), the connection closed: nothing of the body is kept.
    Before, 150 connections each holding a 1 MiB body not yet complete cost the receiver 148 MB."""
    with default_limits.connect() as sock:
        sock.sendall(b"POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n")
        # 401, not the 408 a receiver waiting for the body would give at its body timeout (10 s).
        assert answer(sock).startswith(b"HTTP/1.1 401")
    before = default_limits.rss_mb()

    def unsigned_megabyte() -> None:
        with default_limits.connect() as sock:
            with contextlib.suppress(OSError):  # refused and closed before the body was all sent
                sock.sendall(b"POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Length: 1048577\r\n\r\n" + b"x" * 1048576)
            answer(sock, wait_s=2, silence_is_fine=True)

    senders = [threading.Thread(target=unsigned_megabyte) for _ in range(150)]
    for sender in senders:
        sender.start()
    for sender in senders:
        sender.join()
    assert default_limits.rss_mb() - before < 30
    assert default_limits.deliver("after-the-unsigned-bodies") == 200


def test_a_peer_past_its_cap_closes_its_own_longest_waiting_connections(tmp_path: Path) -> None:
    for served in serve(tmp_path, "--max-connections-per-peer", "5", "--max-connections", "50"):
        first = [served.connect("127.0.0.2") for _ in range(5)]
        other = [served.connect("127.0.0.3") for _ in range(2)]
        time.sleep(0.2)
        more = [served.connect("127.0.0.2") for _ in range(3)]
        everyone = first + other + more
        wait_for(lambda: sum(closed(sock) for sock in everyone) >= 3, "three connections to be closed")  # noqa: B023
        assert [closed(sock) for sock in everyone] == [True] * 3 + [False] * 7
        assert served.deliver("a-peer-of-its-own") == 200
        for sock in everyone:
            sock.close()


@pytest.mark.parametrize(
    "sources",
    [["127.0.0.1"], ["127.0.0.2", "127.0.0.3"]],
    ids=["from the deliveries' own address, as the probe did", "from other peers, filling the cap of all"],
)
def test_the_slow_body_attack_leaves_real_deliveries_acknowledged(tmp_path: Path, sources: list[str]) -> None:
    """The probe's attack at a fifth of its size: 200 connections that send a signed-looking head,
    `Content-Length: 100` and one byte, reopened whenever they are closed, against a cap of 200
    (before, every delivery got 503). Deliveries over two body deadlines, each on a new connection."""
    for served in serve(tmp_path, "--body-timeout", "2", "--max-connections", "200"):
        bodies = [orjson.dumps({"data": {"id": f"under-attack-{n}", "type": "webhook_notification"}}) for n in range(30)]
        requests = [
            b"POST /webhook HTTP/1.1\r\nHost: x\r\nX-T49-Webhook-Signature: %s\r\nContent-Length: %d\r\n\r\n%s"
            % (sign(SECRET, body).encode(), len(body), body)
            for body in bodies
        ]
        _, statuses, attack = uvloop.run(deliveries_under_attack(served.port, sources, 200, requests, 0.15))
        assert statistics.median(attack.samples) >= 150  # the attack kept its connections open as the deliveries went
        assert [status.split(b"\r")[0] for status in statuses] == [b"HTTP/1.1 200 OK"] * len(bodies)
