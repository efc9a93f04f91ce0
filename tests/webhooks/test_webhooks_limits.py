"""The receiver's HTTP limits over real sockets, through `shipsync webhooks serve` and its flags:
idle and slow connections are closed, floods of them never lock a delivery out, oversized heads
are cut off cheaply."""

from __future__ import annotations

import os
import socket
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

from shipsync.serving import free_port, stop_process, wait_until_answers
from shipsync.webhooks.signature import sign

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

    def connect(self) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.port))


def serve(tmp: Path, *flags: str) -> Iterator[Served]:
    port = free_port()
    env = {**os.environ, "SHIPSYNC_WEBHOOK_SECRETS": SECRET, "SHIPSYNC_WAREHOUSE": str(tmp / "w")}
    command = [sys.executable, "-m", "shipsync", "webhooks", "serve", "--port", str(port), "--spool", str(tmp / "spool"), *flags]
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until_answers(f"http://127.0.0.1:{port}/healthz", process, timeout_s=30)
        yield Served(port, process)
    finally:
        stop_process(process)


@pytest.fixture(scope="module")
def default_limits(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    yield from serve(tmp_path_factory.mktemp("default"))


@pytest.fixture(scope="module")
def tight_limits(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    flags = ["--header-timeout", "1", "--idle-timeout", "1", "--body-timeout", "1", "--max-connections", "50", "--max-headers", "20"]
    yield from serve(tmp_path_factory.mktemp("tight"), *flags, "--max-header-bytes", "4096")


def answer(sock: socket.socket, wait_s: float = 5) -> bytes:
    """What the server sends before it closes (b"" if it closes without a word)."""
    sock.settimeout(wait_s)
    data = b""
    try:
        while chunk := sock.recv(4096):
            data += chunk
    except (ConnectionResetError, TimeoutError):
        pass
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
            time.sleep(2.5)
            assert all(closed(sock) for sock in idle)
        for sock in idle:
            sock.close()


def test_idle_and_slow_connections_are_closed(tight_limits: Served) -> None:
    silent, slow_head, slow_body = tight_limits.connect(), tight_limits.connect(), tight_limits.connect()
    slow_head.sendall(b"POST /webhook HTTP/1.1\r\nHost: x\r\n")
    slow_body.sendall(b"POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
    started = time.monotonic()
    assert answer(silent) == b""  # nothing to answer: closed after the idle timeout
    assert answer(slow_head).startswith(b"HTTP/1.1 408")
    assert answer(slow_body).startswith(b"HTTP/1.1 408")
    assert time.monotonic() - started < 4
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
        reply = answer(sock, wait_s=10)
        sender.join(timeout=30)
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
