"""HTTP limits uvicorn does not enforce, in a subclass of its httptools protocol: header and body
deadlines, header size and count limits, `Transfer-Encoding` only as `chunked`, and caps on open
connections, in all and per peer, that make room instead of locking deliveries out.

uvicorn (with httptools) accepts headers of any size and number, for as long as the client likes:
one 128 MiB header cost 24 s of CPU (httptools joins a header's pieces one by one), and idle
connections stayed open for good. Its `limit_concurrency` answers 503 once connections reach the
limit, so idle or slow connections would lock deliveries out.

Deadlines: a request's head must be in within `header_timeout_s` of its first byte, its body within
`body_timeout_s` of the end of its head. Each is one timer per request, started once and never
moved, so a client trickling a byte at a time cannot extend it. The timers start only when a chunk
of bytes leaves a request incomplete: a request that arrives whole in one chunk, as the service's
do, costs no timer at all (an `asyncio.timeout` per delivery cost the receiver ~5-20 µs, a tenth
of its time or more).

Caps: a connection *waits* from when it opens, or answers a request, until its next request is all
in; it is *served* from then until its answer is sent. A new connection beyond `max_connections`,
or beyond `max_connections_per_peer` for its peer, closes the connection (of that peer, for the
peer's cap) that has waited the longest: an idle keep-alive, a head still arriving, or a body still
arriving (before, a connection mid-body never counted as idle, and 1,000 of them sending one byte
each locked every delivery out with 503). A delivery arrives whole within milliseconds, so it is
the newest waiter, never the oldest; it is never closed while served. Only when every connection
is served does a new one get 503.
"""

from __future__ import annotations

import logging
from asyncio import TimerHandle, Transport
from collections import OrderedDict
from typing import ClassVar

from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from shipsync.webhooks.limits import ReceiverLimits

log = logging.getLogger("shipsync.webhooks")


class _Refused(Exception):
    """Raised in a parser callback to stop parsing; `send_400_response` answers the refusal."""


class OpenConnections:
    """One server's open connections, all of them and each peer's, in the order they began to wait
    (oldest first): moving one to the end when it waits again keeps the order in O(1)."""

    def __init__(self) -> None:
        self.all: OrderedDict[LimitedHttpToolsProtocol, None] = OrderedDict()
        self.by_peer: dict[str, OrderedDict[LimitedHttpToolsProtocol, None]] = {}

    def add(self, connection: LimitedHttpToolsProtocol) -> None:
        self.all[connection] = None
        self.by_peer.setdefault(connection.peer, OrderedDict())[connection] = None

    def waiting_again(self, connection: LimitedHttpToolsProtocol) -> None:
        if connection in self.all:
            self.all.move_to_end(connection)
            self.by_peer[connection.peer].move_to_end(connection)

    def remove(self, connection: LimitedHttpToolsProtocol) -> None:
        self.all.pop(connection, None)
        peers = self.by_peer.get(connection.peer)
        if peers is not None:
            peers.pop(connection, None)
            if not peers:
                del self.by_peer[connection.peer]


def _longest_waiting(connections: OrderedDict[LimitedHttpToolsProtocol, None]) -> LimitedHttpToolsProtocol | None:
    # Served connections are skipped; they are few (a delivery is served for milliseconds).
    return next((connection for connection in connections if not connection.served()), None)


class LimitedHttpToolsProtocol(HttpToolsProtocol):
    limits: ClassVar[ReceiverLimits] = ReceiverLimits()
    connections_open: ClassVar[OpenConnections] = OpenConnections()

    # Per connection: its peer's address, bytes of the current request's head so far, its header
    # count, whether its headers are still to come, the timers for its head and body, whether a
    # Transfer-Encoding header was seen, and the refusal a parser callback raised.
    peer = ""
    _head_bytes = 0
    _header_count = 0
    _awaiting_head = True
    _head_timer: TimerHandle | None = None
    _body_timer: TimerHandle | None = None
    _awaiting_body = False
    _transfer_encoding = False
    _refusal: tuple[int, str] | None = None

    def connection_made(self, transport: Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.timeout_keep_alive = self.limits.idle_timeout_s  # type: ignore[assignment]  # uvicorn's is whole seconds
        self.peer = self.client[0] if self.client else ""
        self.connections_open.add(self)
        if not self._make_room():
            self._refuse(503, "too many connections")
            return
        self.timeout_keep_alive_task = self.loop.call_later(self.timeout_keep_alive, self.timeout_keep_alive_handler)

    def _make_room(self) -> bool:
        """Close the longest-waiting connection of this peer past its cap, then of all past the cap;
        False if every one that would have to go is being served."""
        mine, everyone = self.connections_open.by_peer[self.peer], self.connections_open.all
        for connections, cap in ((mine, self.limits.max_connections_per_peer), (everyone, self.limits.max_connections)):
            if len(connections) > cap:
                victim = _longest_waiting(connections)
                if victim is None or victim is self:
                    return False
                victim._close_for_room(len(connections))
        return True

    def _close_for_room(self, count: int) -> None:
        self.connections_open.remove(self)
        if self.transport.is_closing():
            return  # on its way out already (its answer said `connection: close`)
        log.info("connection from %s closed: waited the longest, at %d connections", self.client, count)
        if self._head_bytes or self._awaiting_body:
            self._refuse(503, "closed to make room for other connections")
        else:
            self.transport.close()

    def served(self) -> bool:
        """A request all in and its answer not yet sent: never closed to make room."""
        return self.cycle is not None and not self.cycle.more_body and not self.cycle.response_complete

    def data_received(self, data: bytes) -> None:
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
        self._transfer_encoding = False

    def on_header(self, name: bytes, value: bytes) -> None:
        self._header_count += 1
        if self._header_count > self.limits.max_headers:
            self._refusal = (431, "too many request headers")
            raise _Refused
        if name.lower() == b"transfer-encoding":
            # Only a lone `chunked`: any other coding, or a list (`identity, chunked`), is a framing
            # a proxy in front may read another way (request smuggling).
            if self._transfer_encoding or value.strip().lower() != b"chunked":
                self._refusal = (400, "Transfer-Encoding other than a single chunked")
                raise _Refused
            self._transfer_encoding = True
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

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self.connections_open.waiting_again(self)

    def send_400_response(self, msg: str) -> None:
        if self._refusal is not None:
            self._refuse(*self._refusal)
        else:
            super().send_400_response(msg)

    def connection_lost(self, exc: Exception | None) -> None:
        _cancel(self._head_timer)
        _cancel(self._body_timer)
        self.connections_open.remove(self)
        super().connection_lost(exc)

    def _too_slow(self, what: str) -> None:
        self._head_timer = self._body_timer = None
        if not self.transport.is_closing():
            self._refuse(408, f"{what} not received in time")

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
    """The protocol class for uvicorn's `http=`, with these limits and a record of its own of the
    server's open connections (one class per server)."""
    attributes = {"limits": limits, "connections_open": OpenConnections()}
    return type("LimitedHttpToolsProtocol", (LimitedHttpToolsProtocol,), attributes)
