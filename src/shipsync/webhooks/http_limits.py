"""HTTP limits uvicorn does not enforce, in a subclass of its httptools protocol: header and body
timeouts, header size and count limits, a timeout for connections that never send a request, and
a connection limit that closes idle connections first.

uvicorn (with httptools) accepts headers of any size and number, for as long as the client likes:
one 128 MiB header cost 24 s of CPU (httptools joins a header's pieces one by one), and idle
connections stayed open for good. Its `limit_concurrency` answers 503 once connections reach the
limit, so idle connections would lock deliveries out; here a new connection at the limit closes
the longest-idle one instead. uvicorn's own keep-alive timeout closes idle connections between
requests (`--idle-timeout` sets it), and is armed here for new connections too.

The header and body timers start only when a chunk of bytes leaves a request incomplete: a request
that arrives whole in one chunk, as the service's do, costs no timer at all (an `asyncio.timeout`
per delivery cost the receiver ~5-20 µs, a tenth of its time or more).
"""

from __future__ import annotations

import logging
from asyncio import TimerHandle, Transport
from typing import ClassVar

from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from shipsync.webhooks.limits import ReceiverLimits

log = logging.getLogger("shipsync.webhooks")


class _Refused(Exception):
    """Raised in a parser callback to stop parsing; `send_400_response` answers the refusal."""


class LimitedHttpToolsProtocol(HttpToolsProtocol):
    limits: ClassVar[ReceiverLimits] = ReceiverLimits()

    # Per connection: bytes of the current request's head so far, its header count, whether its
    # headers are still to come, the timer for them, and when the connection last received bytes.
    _head_bytes = 0
    _header_count = 0
    _awaiting_head = True
    _head_timer: TimerHandle | None = None
    _body_timer: TimerHandle | None = None
    _awaiting_body = False
    _refusal: tuple[int, str] | None = None
    _last_active = 0.0

    def connection_made(self, transport: Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.timeout_keep_alive = self.limits.idle_timeout_s  # type: ignore[assignment]  # uvicorn's is whole seconds
        self._last_active = self.loop.time()
        if len(self.connections) > self.limits.max_connections and not self._close_longest_idle():
            self._refuse(503, "too many connections")
            return
        self.timeout_keep_alive_task = self.loop.call_later(self.timeout_keep_alive, self.timeout_keep_alive_handler)

    def data_received(self, data: bytes) -> None:
        self._last_active = self.loop.time()
        if self._awaiting_head:
            room = self.limits.max_header_bytes - self._head_bytes
            self._head_bytes += min(len(data), room)
            if len(data) > room:
                # The head may end within the room: parse that much, then refuse or go on.
                super().data_received(data[:room])
                if self._awaiting_head:
                    self._refuse(431, "request headers too large")
                    return
                data = data[room:]
                if self.transport.is_closing():
                    return
        super().data_received(data)
        if self.transport.is_closing():
            return
        if self._awaiting_head and self._head_bytes and self._head_timer is None:
            self._head_timer = self.loop.call_later(self.limits.header_timeout_s, self._too_slow, "request headers")
        elif self._awaiting_body and self._body_timer is None:
            self._body_timer = self.loop.call_later(self.limits.body_timeout_s, self._too_slow, "request body")

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._header_count = 0

    def on_header(self, name: bytes, value: bytes) -> None:
        self._header_count += 1
        if self._header_count > self.limits.max_headers:
            self._refusal = (431, "too many request headers")
            raise _Refused
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self._awaiting_head, self._head_bytes, self._awaiting_body = False, 0, True
        _cancel(self._head_timer)
        self._head_timer = None
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._awaiting_head, self._awaiting_body = True, False  # what follows is the next request's head
        _cancel(self._body_timer)
        self._body_timer = None

    def send_400_response(self, msg: str) -> None:
        if self._refusal is not None:
            self._refuse(*self._refusal)
        else:
            super().send_400_response(msg)

    def connection_lost(self, exc: Exception | None) -> None:
        _cancel(self._head_timer)
        _cancel(self._body_timer)
        super().connection_lost(exc)

    def _too_slow(self, what: str) -> None:
        self._head_timer = self._body_timer = None
        if not self.transport.is_closing():
            self._refuse(408, f"{what} not received in time")

    def _idle(self) -> bool:
        """No request under way: none begun, or its answer sent (a slow head counts as idle)."""
        return self.cycle is None or self.cycle.response_complete

    def _close_longest_idle(self) -> bool:
        idle = [c for c in self.connections if c is not self and isinstance(c, LimitedHttpToolsProtocol) and c._idle()]
        if not idle:
            return False
        victim = min(idle, key=lambda c: c._last_active)
        log.info("connection from %s closed: idle the longest, at %d connections", victim.client, len(self.connections))
        victim.transport.close()
        return True

    def _refuse(self, status: int, reason: str) -> None:
        """Answer `status` with `reason` and close, without reading any further."""
        body = reason.encode()
        head = b"content-type: text/plain\r\ncontent-length: %d\r\nconnection: close\r\n\r\n" % len(body)
        self.transport.write(STATUS_LINE[status] + head + body)
        self.transport.close()
        log.info("connection from %s refused -> %d %s", self.client, status, reason)


def _cancel(timer: TimerHandle | None) -> None:
    if timer is not None:
        timer.cancel()


def limited_protocol(limits: ReceiverLimits) -> type[LimitedHttpToolsProtocol]:
    """The protocol class for uvicorn's `http=`, with these limits."""
    return type("LimitedHttpToolsProtocol", (LimitedHttpToolsProtocol,), {"limits": limits})
