"""The webhook receiver: `POST /webhook` and `GET /healthz`, as a plain ASGI app.

Order of work for a delivery: read the body under a size cap (413) and a time limit (408); verify
the signature over the raw bytes before parsing (401, nothing stored); parse, and keep a signed
body that is not a notification in quarantine (400); append to the spool and answer 200 only after
the bytes are synced. No input yields a 5xx; a spool that cannot be written answers 503, which the
service retries. Limits on headers and connections are the HTTP protocol's (`http_limits`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass

import orjson
from starlette.types import Receive, Scope, Send

from shipsync.webhooks.framing import encode_record
from shipsync.webhooks.limits import ReceiverLimits
from shipsync.webhooks.notification import parse_notification
from shipsync.webhooks.secrets_store import check_secrets
from shipsync.webhooks.signature import HEADER, verify
from shipsync.webhooks.writer import SpoolWriter

log = logging.getLogger("shipsync.webhooks")
_SIGNATURE = HEADER.encode()
_JSON = [(b"content-type", b"application/json")]
LOGGED_CHARACTERS = 120  # of an event kind or a notification id, in the delivery log


class BodyTooLarge(Exception):
    pass


class ClientGone(Exception):
    pass


@dataclass(frozen=True, slots=True)
class Answer:
    status: int  # 0: the client went away, nothing to answer
    body: dict[str, object]
    outcome: str  # for the delivery log
    event: str | None = None
    notification_id: str | None = None


async def _respond(send: Send, status: int, body: dict[str, object]) -> None:
    payload = orjson.dumps(body)
    await send({"type": "http.response.start", "status": status, "headers": [*_JSON, (b"content-length", b"%d" % len(payload))]})
    await send({"type": "http.response.body", "body": payload})


def printable(text: str | None) -> str:
    """`text` for one log line: control characters (newlines, escapes...) escaped, length capped,
    so that a signed body cannot forge or garble lines of the delivery log."""
    if not text:
        return "-"
    if len(text) > LOGGED_CHARACTERS:
        text = f"{text[:LOGGED_CHARACTERS]}...({len(text)} characters)"
    return text if text.isprintable() else repr(text)[1:-1]


class Receiver:
    def __init__(self, writer: SpoolWriter, secrets: Sequence[str], limits: ReceiverLimits | None = None) -> None:
        check_secrets(list(secrets))
        self.writer = writer
        self.secrets = list(secrets)
        self.limits = limits or ReceiverLimits()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        if scope["path"] == "/webhook" and scope["method"] == "POST":
            started = time.perf_counter()
            answer = await self._deliver(scope, receive)
            if answer.status:
                await _respond(send, answer.status, answer.body)
            elapsed_ms = (time.perf_counter() - started) * 1000
            log.info(
                "delivery event=%s id=%s -> %d %s (%.1f ms)",
                printable(answer.event),
                printable(answer.notification_id),
                answer.status,
                answer.outcome,
                elapsed_ms,
            )
        elif scope["path"] == "/healthz" and scope["method"] == "GET":
            await _respond(send, 200, {"status": "ok", "records": self.writer.records, "fsyncs": self.writer.fsyncs})
        elif scope["path"] == "/webhook":
            await _respond(send, 405, {"error": "use POST"})
        else:
            await _respond(send, 404, {"error": "not found"})

    async def _deliver(self, scope: Scope, receive: Receive) -> Answer:
        headers = dict(scope["headers"])
        too_large = Answer(413, {"error": f"body larger than {self.limits.max_body} bytes"}, "too large")
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limits.max_body:
            return too_large
        try:
            async with asyncio.timeout(self.limits.body_timeout_s):
                body = await self._read_body(receive)
        except TimeoutError:
            return Answer(408, {"error": "body not received in time"}, "slow body")
        except BodyTooLarge:
            return too_large
        except ClientGone:
            return Answer(0, {}, "client went away")
        index = verify(body, headers.get(_SIGNATURE), self.secrets)
        if index is None:
            return Answer(401, {"error": "missing or invalid signature"}, "bad signature")
        notification = parse_notification(body)
        if isinstance(notification, str):
            return self._quarantine(body, notification)
        event, notification_id = notification.event, notification.id
        try:
            await self.writer.append(encode_record(body, index))
        except OSError:
            return Answer(503, {"error": "cannot store the delivery now"}, "spool write failed", event, notification_id)
        return Answer(200, {"received": notification_id}, "stored", event, notification_id)

    def _quarantine(self, body: bytes, reason: str) -> Answer:
        """A signed body that is not a notification: kept on disk, then 400 (503 if it cannot be kept)."""
        try:
            self.writer.quarantine(body, reason)
        except OSError:
            return Answer(503, {"error": "cannot store the delivery now"}, "quarantine failed")
        return Answer(400, {"error": f"not a webhook notification: {reason}"}, f"quarantined ({printable(reason)})")

    async def _read_body(self, receive: Receive) -> bytes:
        chunks: list[bytes] = []
        size = 0
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


async def noop_app(scope: Scope, receive: Receive, send: Send) -> None:
    """The benchmark's peer: reads the body and answers 200, storing nothing."""
    if scope["type"] != "http":
        return
    while (await receive()).get("more_body", False):
        pass
    await _respond(send, 200, {"received": True})
