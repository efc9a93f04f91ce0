"""The webhook receiver: `POST /webhook` and `GET /healthz`, as a plain ASGI app.

Order of work for a delivery: read the body under a size cap (413) and a time limit (408); verify
the signature over the raw bytes before parsing (401, nothing stored); parse, and keep a signed
body that is not a notification in quarantine (400); append to the spool and answer 200 only after
the bytes are fsynced. No input yields a 5xx; a spool that cannot be written answers 503, which the
service retries.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence

import orjson
from starlette.types import Message, Receive, Scope, Send

from shipsync.webhooks.signature import HEADER, verify
from shipsync.webhooks.spool import SpoolWriter, encode_record

log = logging.getLogger("shipsync.webhooks")
MAX_BODY = 1024 * 1024
_HEADER = HEADER.encode()
BODY_TIMEOUT_S = 10.0


class BodyTooLarge(Exception):
    pass


_JSON = [(b"content-type", b"application/json")]


def _response_start(status: int, payload: bytes) -> Message:
    return {"type": "http.response.start", "status": status, "headers": [*_JSON, (b"content-length", b"%d" % len(payload))]}


async def _respond(send: Send, status: int, body: dict[str, object]) -> None:
    payload = orjson.dumps(body)
    await send(_response_start(status, payload))
    await send({"type": "http.response.body", "body": payload})


def notification_of(body: bytes) -> tuple[str, str] | str:
    """(notification id, event kind), or the reason the body is not a notification."""
    try:
        document = orjson.loads(body)
    except orjson.JSONDecodeError:
        return "body is not JSON"
    data = document.get("data") if isinstance(document, dict) else None
    if not isinstance(data, dict):
        return "no data object"
    if data.get("type") != "webhook_notification":
        return f"data.type is {data.get('type')!r}, not webhook_notification"
    if not isinstance(data.get("id"), str) or not data["id"]:
        return "no data.id"
    attributes = data.get("attributes") if isinstance(data.get("attributes"), dict) else {}
    event = attributes.get("event") if isinstance(attributes, dict) else None
    return data["id"], event if isinstance(event, str) else ""


_LINE = "delivery event=%s id=%s -> %d %s (%.1f ms)"


class DeliveryLog:
    """One line per delivery, formatted and written together every FLUSH_S seconds: at thousands
    of deliveries a second, the logging module's per-record work cost a quarter of the receiver's
    throughput, and a write per turn of the event loop still cost a tenth."""

    FLUSH_S = 0.05

    def __init__(self) -> None:
        self._entries: list[tuple[str, str, int, str, float]] = []
        self._timer: asyncio.TimerHandle | None = None

    def line(self, event: str, notification_id: str, status: int, outcome: str, elapsed_s: float) -> None:
        if not log.isEnabledFor(logging.INFO):
            return
        self._entries.append((event, notification_id, status, outcome, elapsed_s))
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self.FLUSH_S, self.flush)

    def flush(self) -> None:
        entries, self._entries, self._timer = self._entries, [], None
        if not entries:
            return
        stream = next((getattr(h, "stream", None) for h in log.handlers if getattr(h, "stream", None) is not None), None)
        if stream is None:
            for event, notification_id, status, outcome, elapsed_s in entries:
                log.info(_LINE, event or "-", notification_id or "-", status, outcome, elapsed_s * 1000)
            return
        line = f"{time.strftime('%Y-%m-%d %H:%M:%S')} {_LINE}\n"
        stream.write(
            "".join(
                line % (event or "-", notification_id or "-", status, outcome, elapsed_s * 1000)
                for event, notification_id, status, outcome, elapsed_s in entries
            )
        )
        stream.flush()


class BodyDeadlines:
    """Cancels deliveries whose body has not arrived in time, with one timer for all of them:
    an `asyncio.timeout` per delivery cost the receiver ~5 µs each, a tenth of its budget."""

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self._deadlines: dict[asyncio.Task[object], float] = {}
        self._expired: set[asyncio.Task[object]] = set()
        self._timer: asyncio.TimerHandle | None = None

    def start(self, task: asyncio.Task[object], loop: asyncio.AbstractEventLoop) -> None:
        self._deadlines[task] = loop.time() + self.timeout_s
        if self._timer is None:
            self._timer = loop.call_later(self._period(), self._sweep)

    def stop(self, task: asyncio.Task[object]) -> None:
        self._deadlines.pop(task, None)

    def expired(self, task: asyncio.Task[object]) -> bool:
        """Whether `task` was cancelled for being late (and forget that it was)."""
        if task in self._expired:
            self._expired.discard(task)
            return True
        return False

    def _period(self) -> float:
        return min(0.5, self.timeout_s / 4)

    def _sweep(self) -> None:
        loop = asyncio.get_running_loop()
        now = loop.time()
        for task, deadline in list(self._deadlines.items()):
            if deadline <= now:
                del self._deadlines[task]
                self._expired.add(task)
                task.cancel()
        self._timer = loop.call_later(self._period(), self._sweep) if self._deadlines else None


class Receiver:
    def __init__(
        self, writer: SpoolWriter, secrets: Sequence[str], *, max_body: int = MAX_BODY, body_timeout_s: float = BODY_TIMEOUT_S
    ) -> None:
        self.delivery_log = DeliveryLog()
        self.writer = writer
        self.secrets = list(secrets)
        self._deadlines = BodyDeadlines(body_timeout_s)
        self.max_body = max_body
        self.body_timeout_s = body_timeout_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        if scope["path"] != "/webhook" or scope["method"] != "POST":
            await self._not_a_delivery(scope, send)
            return
        # A delivery, in this one coroutine: each further frame is resumed again when the fsync
        # completes, and at thousands of deliveries a second every frame shows.
        started = time.perf_counter()
        headers = dict(scope["headers"])
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_body:
            await self._finish(send, started, 413, {"error": f"body larger than {self.max_body} bytes"}, "too large")
            return
        # The loop is looked up once per delivery: each lookup is a getpid() system call here.
        loop = asyncio.get_running_loop()
        task = asyncio.current_task(loop)
        assert task is not None  # uvicorn runs each request in a task
        self._deadlines.start(task, loop)
        try:
            message: Message = await receive()
            if message["type"] == "http.request" and not message.get("more_body", False):
                body = message.get("body", b"")  # the whole body in one message: the usual case
                if len(body) > self.max_body:
                    raise BodyTooLarge
            else:
                body = await self._read_rest(message, receive)
        except asyncio.CancelledError:
            if not self._deadlines.expired(task):
                raise
            task.uncancel()
            await self._finish(send, started, 408, {"error": "body not received in time"}, "slow body")
            return
        except BodyTooLarge:
            await self._finish(send, started, 413, {"error": f"body larger than {self.max_body} bytes"}, "too large")
            return
        except ConnectionError:
            self.delivery_log.line("", "", 0, "client went away", time.perf_counter() - started)
            return
        finally:
            self._deadlines.stop(task)
        index = verify(body, headers.get(_HEADER), self.secrets)
        if index is None:
            await self._finish(send, started, 401, {"error": "missing or invalid signature"}, "bad signature")
            return
        parsed = notification_of(body)
        if isinstance(parsed, str):
            await self._quarantine(send, started, body, parsed)
            return
        notification_id, event = parsed
        try:
            await self.writer.append(encode_record(body, index), loop)
        except OSError:
            await self._finish(send, started, 503, {"error": "cannot store the delivery now"}, "spool write failed", event, notification_id)
            return
        # `_respond` inlined: one coroutine frame less per delivery.
        payload = b'{"received":%s}' % orjson.dumps(notification_id)
        await send(_response_start(200, payload))
        await send({"type": "http.response.body", "body": payload})
        self.delivery_log.line(event, notification_id, 200, "stored", time.perf_counter() - started)

    async def _not_a_delivery(self, scope: Scope, send: Send) -> None:
        if scope["path"] == "/healthz" and scope["method"] == "GET":
            await _respond(send, 200, {"status": "ok", "records": self.writer.records, "fsyncs": self.writer.fsyncs})
        elif scope["path"] != "/webhook":
            await _respond(send, 404, {"error": "not found"})
        else:
            await _respond(send, 405, {"error": "use POST"})

    async def _finish(
        self, send: Send, started: float, status: int, answer: dict[str, object], outcome: str, event: str = "", notification_id: str = ""
    ) -> None:
        await _respond(send, status, answer)
        self.delivery_log.line(event, notification_id, status, outcome, time.perf_counter() - started)

    async def _quarantine(self, send: Send, started: float, body: bytes, reason: str) -> None:
        """A signed body that is not a notification: kept on disk, then 400 (503 if it cannot be kept)."""
        try:
            self.writer.quarantine(body, reason)
        except OSError:
            await self._finish(send, started, 503, {"error": "cannot store the delivery now"}, "quarantine failed")
            return
        await self._finish(send, started, 400, {"error": f"not a webhook notification: {reason}"}, f"quarantined ({reason})")

    async def _read_rest(self, first: Message, receive: Receive) -> bytes:
        """The body of a delivery that arrives in several messages, from the first one on."""
        chunks: list[bytes] = []
        size = 0
        message = first
        while True:
            if message["type"] == "http.disconnect":
                raise ConnectionError("client disconnected")
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body:
                raise BodyTooLarge
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)
            message = await receive()


async def noop_app(scope: Scope, receive: Receive, send: Send) -> None:
    """The benchmark's peer: reads the body and answers 200, storing nothing."""
    if scope["type"] != "http":
        return
    while (await receive()).get("more_body", False):
        pass
    await _respond(send, 200, {"received": True})
