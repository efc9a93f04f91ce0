"""The receiver over real HTTP: signatures, every bad input, request smuggling and framing
variants, duplicates and concurrent copies."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import time
from pathlib import Path

import httpx
import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from shipsync.webhooks.framing import read_records
from shipsync.webhooks.http_limits import ConnectionGuard
from shipsync.webhooks.limits import ReceiverLimits
from shipsync.webhooks.load import load_events
from shipsync.webhooks.receiver import Receiver
from shipsync.webhooks.signature import sign, verify
from shipsync.webhooks.spool import segments
from shipsync.webhooks.writer import SpoolWriter
from shipsync_sandbox.serving import BackgroundServer
from support.http import HTTP
from support.lake import location
from support.waiting import HANG_S, wait_for

SECRET, OTHER = "whsec-test-00001", "whsec-test-00002"


def test_known_answer_vector() -> None:
    # RFC 4231-style check: HMAC-SHA256("key", "The quick brown fox jumps over the lazy dog").
    assert sign("key", b"The quick brown fox jumps over the lazy dog") == (
        "f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8"
    )


@given(st.binary(max_size=200), st.binary(max_size=80))
def test_verify_never_accepts_a_wrong_signature(body: bytes, signature: bytes) -> None:
    if signature != sign(SECRET, body).encode():
        assert verify(body, signature, [SECRET]) is None
    assert verify(body, sign(SECRET, body).encode(), [OTHER, SECRET]) == 1


def notification(notification_id: str = "n-1", event: str = "container.transport.vessel_arrived", **extra: object) -> bytes:
    return orjson.dumps(
        {
            "data": {
                "id": notification_id,
                "type": "webhook_notification",
                "attributes": {"event": event, "delivery_status": "pending", "created_at": "2026-05-11T18:30:00Z"},
                "relationships": {"webhook": {"data": {"id": "w", "type": "webhook"}}},
            },
            "included": [],
            **extra,
        }
    )


@pytest.fixture
def receiver(tmp_path: Path):  # type: ignore[no-untyped-def]
    writer = SpoolWriter(tmp_path / "spool")
    limits = ReceiverLimits(max_body=64 * 1024, body_timeout_s=1.0)
    with BackgroundServer(**ConnectionGuard(limits).uvicorn_settings(Receiver(writer, [SECRET, OTHER], limits))) as server:
        yield server, writer
    writer.close()


def post(url: str, body: bytes, secret: str | None = SECRET, signature: str | None = None) -> httpx.Response:
    headers = {"Content-Type": "application/json"}
    if signature is not None:
        headers["X-T49-Webhook-Signature"] = signature
    elif secret is not None:
        headers["X-T49-Webhook-Signature"] = sign(secret, body)
    return HTTP.post(f"{url}/webhook", content=body, headers=headers, timeout=10)


def stored(writer: SpoolWriter) -> list[bytes]:
    return [r.body for path in segments(writer.spool) for r in read_records(path)]


def test_good_delivery_is_stored_before_200(receiver) -> None:  # type: ignore[no-untyped-def]
    server, writer = receiver
    assert HTTP.get(f"{server.url}/healthz").status_code == 200
    body = notification(event="container.transport.delivered")  # a kind beyond the 34 is accepted
    assert post(server.url, body).status_code == 200
    assert stored(writer) == [body]
    assert post(server.url, notification("n-2"), secret=OTHER).status_code == 200
    assert [r.secret_index for p in segments(writer.spool) for r in read_records(p)] == [0, 1]


@pytest.mark.parametrize(
    "signature",
    [None, "", "abc", "F" * 64, "g" * 64, "0" * 64, "0" * 63, "0" * 65, "sha256=" + "0" * 64, "0" * 32 + " " + "0" * 31],
)
def test_bad_signatures_are_401_and_store_nothing(receiver, signature: str | None) -> None:  # type: ignore[no-untyped-def]
    server, writer = receiver
    body = notification()
    response = post(server.url, body, secret=None, signature=signature) if signature is not None else post(server.url, body, secret=None)
    assert response.status_code == 401
    assert post(server.url, body, secret="wrong-secret").status_code == 401
    assert stored(writer) == []


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"not json", "not JSON"),
        (b"\xff\xfe\x00garbage", "not JSON"),
        (b"[1,2]", "no data"),
        (orjson.dumps({"data": {"type": "document", "id": "x"}}), "data.type"),
        (orjson.dumps({"data": {"type": "webhook_notification"}}), "data.id"),
        (b"[" * 5000 + b"]" * 5000, "nested 5,000 levels deep"),
    ],
)
def test_signed_non_notifications_are_400_and_quarantined(receiver, body: bytes, reason: str) -> None:  # type: ignore[no-untyped-def]
    server, writer = receiver
    response = post(server.url, body)
    assert response.status_code == 400 and reason in response.text
    kept = sorted((writer.spool / "quarantine").glob("*.bin"))
    assert [k.read_bytes() for k in kept] == [body]
    assert stored(writer) == []


@pytest.mark.parametrize("signature", [None, b"F" * 64, b"0" * 63, b"sha256=" + b"0" * 64])
def test_a_signature_that_cannot_match_is_refused_before_the_body(receiver, signature: bytes | None) -> None:  # type: ignore[no-untyped-def]
    """401 and closed at the end of the head: the body (never sent here) is not waited for. A
    receiver that waited would answer 408 at its body timeout (1 s here), as the next test shows."""
    server, writer = receiver
    head = b"POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Length: 50000\r\n"
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        sock.sendall(head + (b"X-T49-Webhook-Signature: %s\r\n" % signature if signature else b"") + b"\r\n")
        sock.settimeout(HANG_S)
        answer = b""
        while chunk := sock.recv(4096):
            answer += chunk
        assert answer.startswith(b"HTTP/1.1 401") and b"connection: close" in answer
    assert stored(writer) == []


def test_oversized_and_slow_bodies(receiver) -> None:  # type: ignore[no-untyped-def]
    server, writer = receiver
    huge = notification(padding="x" * 200_000)
    assert post(server.url, huge).status_code == 413
    # Lying about the length, sending a little, then stalling: 408 after the body timeout.
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        sock.sendall(_SIGNED + b'Content-Length: 500\r\n\r\n{"data":')
        sock.settimeout(HANG_S)
        started = time.monotonic()
        answer = sock.recv(1024)
        assert answer.startswith(b"HTTP/1.1 408") and time.monotonic() - started >= 0.9  # not before the body timeout

    # The same on any path: a health check's body that never ends does not keep its connection.
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n{")
        sock.settimeout(HANG_S)
        assert sock.recv(1024).startswith(b"HTTP/1.1 408")

    # Chunked upload beyond the cap, with no Content-Length to refuse early.
    def chunks():  # type: ignore[no-untyped-def]
        for _ in range(100):
            yield b"x" * 1024

    response = HTTP.post(f"{server.url}/webhook", content=chunks(), headers={"X-T49-Webhook-Signature": "0" * 64})
    assert response.status_code == 413
    assert stored(writer) == []


def test_50_concurrent_copies_are_stored_once_and_a_different_body_is_a_conflict(receiver, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    server, writer = receiver
    body = notification("same-id")

    async def burst() -> list[int]:
        async with httpx.AsyncClient() as client:
            headers = {"X-T49-Webhook-Signature": sign(SECRET, body)}
            responses = await asyncio.gather(*(client.post(f"{server.url}/webhook", content=body, headers=headers) for _ in range(50)))
        return [r.status_code for r in responses]

    assert asyncio.run(burst()) == [200] * 50  # each once the one copy written was synced
    different = notification("same-id", event="container.transport.vessel_departed")
    assert post(server.url, different).status_code == 200
    assert stored(writer) == [body, different] and writer.fsyncs == 2
    report = load_events(location(tmp_path / "w"), writer.spool)
    assert (report.loaded, report.duplicates, report.conflicts) == (1, 0, 1)
    assert load_events(location(tmp_path / "w"), writer.spool).conflicts == 0  # a re-run reads nothing new


def test_one_log_line_per_delivery_without_secrets(receiver, caplog: pytest.LogCaptureFixture) -> None:  # type: ignore[no-untyped-def]
    server, _ = receiver
    with caplog.at_level(logging.INFO, logger="shipsync.webhooks"):
        assert post(server.url, notification("n-logged")).status_code == 200
        assert post(server.url, notification("n-unsigned"), secret="wrong-secret").status_code == 401
        wait_for(lambda: caplog.text.count("delivery event=") >= 2, "two delivery log lines", every_s=0.02)
    assert "delivery event=container.transport.vessel_arrived id=n-logged -> 200 stored" in caplog.text
    assert "-> 401 bad signature" in caplog.text
    assert SECRET not in caplog.text and OTHER not in caplog.text


def test_a_10_mb_body_is_refused_while_reading_and_the_receiver_carries_on(tmp_path: Path) -> None:
    writer = SpoolWriter(tmp_path / "spool")
    with BackgroundServer(Receiver(writer, [SECRET])) as server:  # the default 1 MiB cap
        ten_mb = notification(padding="x" * 10 * 1024 * 1024)
        assert post(server.url, ten_mb).status_code == 413

        def chunks():  # type: ignore[no-untyped-def]
            for _ in range(10 * 1024):
                yield b"y" * 1024

        response = HTTP.post(f"{server.url}/webhook", content=chunks(), headers={"X-T49-Webhook-Signature": sign(SECRET, b"")}, timeout=30)
        assert response.status_code == 413
        assert post(server.url, notification("after-the-big-ones")).status_code == 200
    writer.close()
    assert stored(writer) == [notification("after-the-big-ones")]


_SIGNED = b"POST /webhook HTTP/1.1\r\nHost: x\r\nX-T49-Webhook-Signature: " + b"0" * 64 + b"\r\n"
_SMUGGLED = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
_CHUNKED = b"Transfer-Encoding: chunked\r\n"
# Framings a proxy in front could read otherwise than the receiver, each followed by a second
# request that would be smuggled in if the framing were taken.
SMUGGLING = {
    "Content-Length, then Transfer-Encoding": _SIGNED + b"Content-Length: 4\r\n" + _CHUNKED + b"\r\n0\r\n\r\n",
    "Transfer-Encoding, then Content-Length": _SIGNED + _CHUNKED + b"Content-Length: 4\r\n\r\n0\r\n\r\n",
    "two Content-Lengths that differ": _SIGNED + b"Content-Length: 4\r\nContent-Length: 40\r\n\r\nabcd",
    "two Content-Lengths that agree": _SIGNED + b"Content-Length: 4\r\nContent-Length: 4\r\n\r\nabcd",
    "a list in Content-Length": _SIGNED + b"Content-Length: 4, 4\r\n\r\nabcd",
    "a sign in Content-Length": _SIGNED + b"Content-Length: +4\r\n\r\nabcd",
    "a negative Content-Length": _SIGNED + b"Content-Length: -1\r\n\r\n",
    "a hex Content-Length": _SIGNED + b"Content-Length: 0x4\r\n\r\nabcd",
    "a space inside Content-Length": _SIGNED + b"Content-Length: 1 0\r\n\r\n0123456789",
    "Transfer-Encoding: identity, chunked": _SIGNED + b"Transfer-Encoding: identity, chunked\r\n\r\n0\r\n\r\n",
    "Transfer-Encoding: chunked, identity": _SIGNED + b"Transfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n",
    "Transfer-Encoding: xchunked": _SIGNED + b"Transfer-Encoding: xchunked\r\n\r\n0\r\n\r\n",
    "Transfer-Encoding given twice": _SIGNED + _CHUNKED + b"Transfer-Encoding: identity\r\n\r\n0\r\n\r\n",
    "Transfer-Encoding after a vertical tab": _SIGNED + b"Transfer-Encoding:\x0bchunked\r\n\r\n0\r\n\r\n",
    "a space before the colon": _SIGNED + b"Transfer-Encoding : chunked\r\n\r\n0\r\n\r\n",
    "Transfer-Encoding folded onto a next line": _SIGNED + b"Transfer-Encoding:\r\n chunked\r\n\r\n0\r\n\r\n",
    "bare LF line ends": _SIGNED.replace(b"\r\n", b"\n") + b"Transfer-Encoding: chunked\n\n0\n\n",
    "a chunk size that is not hex": _SIGNED + _CHUNKED + b"\r\n1g\r\nx\r\n0\r\n\r\n",
    "a chunk size past 64 bits": _SIGNED + _CHUNKED + b"\r\nffffffffffffffffff1\r\nx\r\n0\r\n\r\n",
    "a chunk longer than its size": _SIGNED + _CHUNKED + b"\r\n4\r\nabcdX\r\n0\r\n\r\n",
    "a bare LF in a chunk extension": _SIGNED + _CHUNKED + b"\r\n4;a\nb\r\nabcd\r\n0\r\n\r\n",
    "a NUL in a header value": _SIGNED + b"X-A: a\x00b\r\nContent-Length: 0\r\n\r\n",
    "a space in a header name": _SIGNED + b"Content Length: 4\r\n\r\nabcd",
    "a CR alone": _SIGNED + b"Content-Length: 0\rX-B: 1\r\n\r\n",
    "HTTP/1.2": _SIGNED.replace(b"HTTP/1.1", b"HTTP/1.2") + b"Content-Length: 0\r\n\r\n",
}


@pytest.mark.parametrize("name", SMUGGLING)
def test_smuggling_and_framing_variants_are_refused_and_nothing_follows(receiver, name: str) -> None:  # type: ignore[no-untyped-def]
    server, writer = receiver
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        sock.sendall(SMUGGLING[name] + _SMUGGLED)
        sock.settimeout(3)
        received = b""
        with contextlib.suppress(TimeoutError, ConnectionResetError):
            while chunk := sock.recv(65536):
                received += chunk
    assert [line for line in received.split(b"\r\n") if line.startswith(b"HTTP/")] == [b"HTTP/1.1 400 Bad Request"]
    assert stored(writer) == []
