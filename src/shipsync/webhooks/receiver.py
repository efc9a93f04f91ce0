"""The webhook receiver: `POST /webhook` and `GET /healthz`, as a plain ASGI app.

Order of work for a delivery, refusing as early as it can: at the end of the headers (where the
app starts), too many header fields (431), a `Transfer-Encoding` other than one `chunked` (400), a
signature header that cannot match (absent, or not 64 lowercase hex digits: 401) and a declared
length over the cap (413) are answered before a byte of the body is read; then the body, under its
size cap (413) and its deadline (408, from the end of the head: a trickle cannot stretch it); the
signature verified over the raw bytes before parsing (401, nothing stored); a replay of a delivery
stored lately answered 200 without writing it again (`RecentDeliveries`); parsing, within
`body_limits`, and a signed body that is not a notification kept in quarantine (400); the record
appended to the spool and 200 answered only once synced. Every refusal closes its connection, so
nothing more is read from it. No input yields a 5xx; a spool that cannot be written answers 503,
which the service retries. Limits on connections and on heads are the connection guard's
(`http_limits`): they come before a request reaches the app.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import orjson
from starlette.types import Receive, Scope, Send

from shipsync.webhooks.framing import encode_record
from shipsync.webhooks.limits import ReceiverLimits
from shipsync.webhooks.notification import parse_notification
from shipsync.webhooks.secrets_store import check_secrets
from shipsync.webhooks.signature import HEADER, verify, well_formed
from shipsync.webhooks.writer import SpoolWriter

log = logging.getLogger("shipsync.webhooks")
_SIGNATURE = HEADER.encode()
_JSON = [(b"content-type", b"application/json")]
_CLOSE = [(b"connection", b"close")]
LOGGED_CHARACTERS = 120  # of an event kind or a notification id, in the delivery log


class BodyTooLarge(Exception):
    pass


class BodyTooSlow(Exception):
    pass


class ClientGone(Exception):
    pass


@dataclass(slots=True)
class Answer:
    status: int  # 0: the client went away, nothing to answer
    body: dict[str, object]
    outcome: str  # for the delivery log
    event: str | None = None
    notification_id: str | None = None


async def _respond(send: Send, status: int, body: dict[str, object]) -> None:
    """Answer with `body` as JSON; any answer but 200 closes the connection (nothing more of a
    refused request, or of what follows it, is read)."""
    payload = orjson.dumps(body)
    headers = [*_JSON, (b"content-length", b"%d" % len(payload)), *(_CLOSE if status != 200 else [])]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})


def printable(text: str | None) -> str:
    """`text` for one log line: control characters (newlines, escapes...) escaped, length capped,
    so that a signed body cannot forge or garble lines of the delivery log."""
    if not text:
        return "-"
    if len(text) > LOGGED_CHARACTERS:
        text = f"{text[:LOGGED_CHARACTERS]}...({len(text)} characters)"
    return text if text.isprintable() else repr(text)[1:-1]


class DeliveryLog:
    """One line per delivery, handed to the logging handlers together, as one record, every
    FLUSH_S seconds: a log record per delivery costs the receiver a large share of its throughput
    in a burst, and a line in a batch costs next to nothing."""

    FLUSH_S = 0.05

    def __init__(self) -> None:
        self._lines: list[str] = []
        self._timer: asyncio.TimerHandle | None = None

    def add(self, answer: Answer, elapsed_ms: float) -> None:
        if not log.isEnabledFor(logging.INFO):
            return
        event, notification_id = printable(answer.event), printable(answer.notification_id)
        self._lines.append(f"delivery event={event} id={notification_id} -> {answer.status} {answer.outcome} ({elapsed_ms:.1f} ms)")
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self.FLUSH_S, self.flush)

    def flush(self) -> None:
        lines, self._lines, self._timer = self._lines, [], None
        if lines:
            log.info("%s", "\n".join(lines))


class EveryLineFormatter(logging.Formatter):
    """The time in front of every line of a record (the delivery log's records hold many lines)."""

    def format(self, record: logging.LogRecord) -> str:
        stamp = self.formatTime(record)
        return "\n".join(f"{stamp} {line}" for line in super().format(record).split("\n"))


@dataclass(frozen=True, slots=True)
class Stored:
    synced: asyncio.Future[None]  # the writer's: done once the record is on disk
    event: str | None
    notification_id: str


class RecentDeliveries:
    """The deliveries stored last, by secret and signature: the same signature under the same
    secret is the same body. A replay of one is answered 200 once the first copy is on disk, and
    not written again, so a captured delivery sent many times takes the spool's room once. Older
    ones are forgotten: a replay of those is written again, and `events load`
    counts it as a redelivery."""

    def __init__(self, size: int = 10_000) -> None:
        self.size = size
        self._stored: OrderedDict[tuple[int, bytes], Stored] = OrderedDict()

    def get(self, key: tuple[int, bytes]) -> Stored | None:
        stored = self._stored.get(key)
        if stored is not None:
            self._stored.move_to_end(key)
        return stored

    def add(self, key: tuple[int, bytes], stored: Stored) -> None:
        self._stored[key] = stored
        if len(self._stored) > self.size:
            self._stored.popitem(last=False)

    def forget(self, key: tuple[int, bytes]) -> None:
        self._stored.pop(key, None)


class Receiver:
    def __init__(self, writer: SpoolWriter, secrets: Sequence[str], limits: ReceiverLimits | None = None) -> None:
        check_secrets(list(secrets))
        self.delivery_log = DeliveryLog()
        self.writer = writer
        self.secrets = list(secrets)
        self.limits = limits or ReceiverLimits()
        self.recent = RecentDeliveries()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        if (refusal := self._head_refusal(scope["headers"])) is not None:
            await _respond(send, refusal.status, refusal.body)
            self.delivery_log.add(refusal, 0.0)
        elif scope["path"] == "/webhook" and scope["method"] == "POST":
            started = time.perf_counter()
            answer = await self._deliver(scope, receive)
            if answer.status:
                await _respond(send, answer.status, answer.body)
            self.delivery_log.add(answer, (time.perf_counter() - started) * 1000)
        elif scope["path"] == "/healthz" and scope["method"] == "GET":
            try:
                await self._read_body(receive)  # none is expected; one that comes is read under the same limits
            except BodyTooLarge:
                await _respond(send, 413, {"error": f"body larger than {self.limits.max_body} bytes"})
            except BodyTooSlow:
                await _respond(send, 408, {"error": "request body not received in time"})
            except ClientGone:
                pass
            else:
                await _respond(send, 200, {"status": "ok", "records": self.writer.records, "fsyncs": self.writer.fsyncs})
        elif scope["path"] == "/webhook":
            await _respond(send, 405, {"error": "use POST"})
        else:
            await _respond(send, 404, {"error": "not found"})

    async def _deliver(self, scope: Scope, receive: Receive) -> Answer:
        headers = dict(scope["headers"])
        signature = headers.get(_SIGNATURE)
        if not well_formed(signature):
            return self._unsigned()
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limits.max_body:
            return self._too_large()
        try:
            body = await self._read_body(receive)
        except BodyTooLarge:
            return self._too_large()
        except BodyTooSlow:
            return Answer(408, {"error": "request body not received in time"}, "too slow")
        except ClientGone:
            return Answer(0, {}, "client went away")
        index = verify(body, signature, self.secrets)
        if index is None:
            return self._unsigned()
        key = (index, signature)
        if (earlier := self.recent.get(key)) is not None:
            return await self._stored(earlier, "a replay, stored once")
        notification = parse_notification(body)
        if isinstance(notification, str):
            return self._quarantine(body, notification)
        stored = Stored(self.writer.append(encode_record(body, index)), notification.event, notification.id)
        del notification  # not kept while the record syncs
        self.recent.add(key, stored)
        answer = await self._stored(stored, "stored")
        if answer.status != 200:
            self.recent.forget(key)  # a replay is written again, then
        return answer

    async def _stored(self, stored: Stored, outcome: str) -> Answer:
        """200 once the record is on disk (shielded: a request that goes away cancels nothing of
        the write another may be waiting on), 503 if it could not be written."""
        try:
            await asyncio.shield(stored.synced)
        except OSError:
            return Answer(503, {"error": "cannot store the delivery now"}, "spool write failed", stored.event, stored.notification_id)
        return Answer(200, {"received": stored.notification_id}, outcome, stored.event, stored.notification_id)

    def _unsigned(self) -> Answer:
        return Answer(401, {"error": "missing or invalid signature"}, "bad signature")

    def _too_large(self) -> Answer:
        return Answer(413, {"error": f"body larger than {self.limits.max_body} bytes"}, "too large")

    def _quarantine(self, body: bytes, reason: str) -> Answer:
        """A signed body that is not a notification: kept on disk, then 400 (503 if it cannot be kept)."""
        try:
            self.writer.quarantine(body, reason)
        except OSError:
            return Answer(503, {"error": "cannot store the delivery now"}, "quarantine failed")
        return Answer(400, {"error": f"not a webhook notification: {reason}"}, f"quarantined ({printable(reason)})")

    def _head_refusal(self, headers: list[tuple[bytes, bytes]]) -> Answer | None:
        """What a request's head alone refuses it for: too many fields, or a framing that a proxy in
        front may read another way (request smuggling) than httptools does."""
        if len(headers) > self.limits.max_headers:
            return Answer(431, {"error": "too many request headers"}, "too many headers")
        codings = [value for name, value in headers if name == b"transfer-encoding"]
        if codings and codings != [b"chunked"]:
            return Answer(400, {"error": "Transfer-Encoding other than a single chunked"}, "odd framing")
        return None

    async def _read_body(self, receive: Receive) -> bytes:
        """The body, all of it within `body_timeout_s` of the app's start (the end of the head): the
        deadline is set once, so no pace of arrival moves it."""
        chunks: list[bytes] = []
        size = 0
        try:
            async with asyncio.timeout(self.limits.body_timeout_s):
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        raise ClientGone
                    chunk = message.get("body", b"")
                    size += len(chunk)
                    if size > self.limits.max_body:
                        raise BodyTooLarge
                    chunks.append(chunk)
                    if not message.get("more_body", False):
                        return b"".join(chunks)
        except TimeoutError:
            raise BodyTooSlow from None
