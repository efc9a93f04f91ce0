"""The receiver's limits on connections and on request heads: the ones neither uvicorn nor Starlette
has a setting for (docs/webhooks.md, "Why the receiver has a connection guard of its own").

uvicorn serves the receiver with httptools, whose parser (llhttp) refuses malformed and ambiguous
framing with 400, and closes a connection left idle after an answer (`timeout_keep_alive`). The
receiver app itself refuses what a request's head says, before the body (`receiver`), and reads
each body under a deadline. What is left is here, in `ConnectionGuard`: a protocol that uvicorn
builds for each connection (its `http=` setting) and that hands every byte on to uvicorn's own, and
a wrapper of the app that tells the guard when a request is all in and when it is answered.

- **Heads.** A request's head must be in within `header_timeout_s` of its first byte: one timer per
  request, started once and never moved, so a client trickling a byte at a time cannot stretch it.
  A head past `max_header_bytes` is refused (431) before uvicorn's parser sees the rest of it. A
  new connection that sends nothing is closed after `idle_timeout_s`. The guard follows requests'
  boundaries with a parser of its own (httptools, the one uvicorn uses), fed the same bytes.
- **Caps.** A connection *waits* from when it opens, or is answered, until its next request is all
  in (its head and its body); it is *served* from then until its answer. A new connection beyond
  `max_connections`, or beyond `max_connections_per_peer` for its peer, closes the connection (of
  that peer, for the peer's cap) that has waited the longest: an idle keep-alive, a head or a body
  still arriving. A delivery arrives whole within milliseconds, so it is the newest waiter, never
  the oldest, and it is never closed while served. Only when every connection is served does a
  new one get 503.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections import OrderedDict
from http import HTTPStatus
from typing import Any, cast

import httptools
from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from shipsync.webhooks.limits import ReceiverLimits

log = logging.getLogger("shipsync.webhooks")
Client = tuple[str, int]


class ConnectionGuard:
    """One server's open connections, all of them and each peer's, in the order they began to wait
    (oldest first: moving one to the end when it waits again keeps the order in O(1)), and what
    uvicorn needs to serve an app under them (`uvicorn_settings`)."""

    def __init__(self, limits: ReceiverLimits) -> None:
        self.limits = limits
        self.open_connections: OrderedDict[GuardedConnection, None] = OrderedDict()
        self.by_peer: dict[str, OrderedDict[GuardedConnection, None]] = {}
        self.by_client: dict[Client, GuardedConnection] = {}

    def uvicorn_settings(self, app: ASGIApp) -> dict[str, Any]:
        """uvicorn's settings to serve `app` under the limits: this guard's protocol around
        httptools', the app wrapped to report its requests, uvicorn's idle timeout after an answer
        (whole seconds there, rounded up), and `scope["client"]` left as the socket's peer (the
        guard finds a request's connection by it)."""
        guard = self

        class Protocol(GuardedConnection):
            def __init__(self, **uvicorn_arguments: Any) -> None:
                super().__init__(guard, HttpToolsProtocol(**uvicorn_arguments))

        return {
            "app": self._reporting(app),
            "http": Protocol,
            "timeout_keep_alive": math.ceil(self.limits.idle_timeout_s),
            "proxy_headers": False,
        }

    def _reporting(self, app: ASGIApp) -> ASGIApp:
        async def reporting(scope: Scope, receive: Receive, send: Send) -> None:
            client = scope.get("client")
            connection = self.by_client.get((client[0], client[1])) if scope["type"] == "http" and client else None
            if connection is None:
                await app(scope, receive, send)
                return

            async def receive_reporting() -> Any:
                message = await receive()
                if message["type"] == "http.request" and not message.get("more_body", False):
                    connection.serving = True  # all in: from now until its answer, never closed for room
                return message

            try:
                await app(scope, receive_reporting, send)
            finally:
                connection.answered()

        return reporting

    def add(self, connection: GuardedConnection) -> bool:
        """Count a new connection in; False if there is no room for it, even after closing the
        longest-waiting connection of its peer and of all."""
        self.open_connections[connection] = None
        self.by_client[connection.client] = connection
        mine = self.by_peer.setdefault(connection.peer, OrderedDict())
        mine[connection] = None
        for connections, cap in ((mine, self.limits.max_connections_per_peer), (self.open_connections, self.limits.max_connections)):
            if len(connections) > cap:
                # The served are skipped; they are few (a delivery is served for milliseconds).
                victim = next((c for c in connections if not c.serving), None)
                if victim is None or victim is connection:
                    return False
                log.info("connection from %s closed: waited the longest, at %d connections", victim.client, len(connections))
                victim.close_for_room()
        return True

    def waiting_again(self, connection: GuardedConnection) -> None:
        if connection in self.open_connections:
            self.open_connections.move_to_end(connection)
            self.by_peer[connection.peer].move_to_end(connection)

    def remove(self, connection: GuardedConnection) -> None:
        self.open_connections.pop(connection, None)
        if self.by_client.get(connection.client) is connection:
            del self.by_client[connection.client]
        peers = self.by_peer.get(connection.peer)
        if peers is not None:
            peers.pop(connection, None)
            if not peers:
                del self.by_peer[connection.peer]


class GuardedConnection(asyncio.Protocol):
    """One connection: every event handed on to uvicorn's protocol (`inner`), after the guard's
    own look at it (see the module's docstring)."""

    def __init__(self, guard: ConnectionGuard, inner: asyncio.Protocol) -> None:
        self.guard = guard
        self.limits = guard.limits
        self.inner = inner
        self.loop = asyncio.get_running_loop()
        # The requests' boundaries, read from the same bytes as uvicorn's parser reads them.
        self.boundaries = httptools.HttpRequestParser(self)
        self.boundaries.set_dangerous_leniencies(lenient_data_after_close=True)  # as uvicorn's parser is
        self.followed = True  # False once the boundaries are lost (a request uvicorn's parser refuses too)
        self.transport: asyncio.Transport | None = None
        self.client: Client = ("", 0)
        self.peer = ""
        self.serving = False  # a request all in, its answer not yet sent
        self.head_bytes = 0  # of the request whose head is arriving
        self.in_body = False  # its head in, its body arriving
        self.idle_timer: asyncio.TimerHandle | None = None  # a new connection's first byte
        self.head_timer: asyncio.TimerHandle | None = None  # a head's last byte

    # -- asyncio's protocol, handed on -----------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is one, without the class
        peer = transport.get_extra_info("peername")
        self.client = (str(peer[0]), int(peer[1])) if isinstance(peer, tuple) and len(peer) >= 2 else ("", 0)
        self.peer = self.client[0]
        self.inner.connection_made(self.transport)
        if not self.guard.add(self):
            self.refuse(HTTPStatus.SERVICE_UNAVAILABLE, "too many connections")
            return
        self.idle_timer = self.loop.call_later(math.ceil(self.limits.idle_timeout_s), self._idle)

    def data_received(self, data: bytes) -> None:
        if self._follow(data):
            self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received()

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        _cancel(self.idle_timer)
        _cancel(self.head_timer)
        self.guard.remove(self)
        self.inner.connection_lost(exc)

    # -- the requests' boundaries --------------------------------------------------------------

    def _follow(self, data: bytes) -> bool:
        """Read `data` for the requests' boundaries and the head's limits; False if the connection
        was refused for it (nothing of it then goes on to uvicorn)."""
        if self.closing():
            return False
        if not self.followed or self.in_body or self.serving:
            return self._parse(data)
        _cancel(self.idle_timer)  # a first byte: the new connection's deadline gives way to its head's
        room = self.limits.max_header_bytes - self.head_bytes
        self.head_bytes += min(len(data), room)
        if self.head_timer is None:
            self.head_timer = self.loop.call_later(self.limits.header_timeout_s, self._too_slow)
        if len(data) <= room:
            return self._parse(data)
        # The head may end within the room: read that much, then refuse, or go on with the rest.
        if not self._parse(data[:room]):
            return False
        if not self.in_body and not self.serving:
            self.refuse(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, "request headers too large")
            return False
        return self._parse(data[room:])

    def _parse(self, data: bytes) -> bool:
        if self.followed:
            try:
                self.boundaries.feed_data(data)
            except (httptools.HttpParserError, httptools.HttpParserUpgrade):
                self.followed = False  # uvicorn's parser refuses (400) or declines (an upgrade) it too
        return not self.closing()

    def on_headers_complete(self) -> None:
        _cancel(self.head_timer)
        self.head_timer, self.head_bytes, self.in_body = None, 0, True

    def on_message_complete(self) -> None:
        self.in_body = False  # what follows is the next request's head

    def answered(self) -> None:
        """The app answered a request: the connection waits again, as the newest waiter."""
        self.serving = False
        self.guard.waiting_again(self)

    # -- closing -------------------------------------------------------------------------------

    def closing(self) -> bool:
        return self.transport is None or self.transport.is_closing()

    def close_for_room(self) -> None:
        """Closed for a newer connection: 503 if a request was under way, else without a word."""
        self.guard.remove(self)
        if self.head_bytes or self.in_body:
            self.refuse(HTTPStatus.SERVICE_UNAVAILABLE, "closed to make room for other connections")
        elif not self.closing():
            self.transport.close()  # type: ignore[union-attr]

    def refuse(self, status: HTTPStatus, reason: str) -> None:
        """Answer `status` with `reason` and close, without reading any further."""
        if self.closing() or self.transport is None:
            return
        body = reason.encode()
        head = b"HTTP/1.1 %d %s\r\ncontent-type: text/plain\r\ncontent-length: %d\r\nconnection: close\r\n\r\n"
        self.transport.write(head % (status.value, status.phrase.encode(), len(body)) + body)
        self.transport.close()
        log.info("connection from %s refused -> %d %s", self.client, status.value, reason)

    def _idle(self) -> None:
        self.idle_timer = None
        if not self.closing():
            self.transport.close()  # type: ignore[union-attr]

    def _too_slow(self) -> None:
        self.head_timer = None
        self.refuse(HTTPStatus.REQUEST_TIMEOUT, "request headers not received in time")


def _cancel(timer: asyncio.TimerHandle | None) -> None:
    if timer is not None:
        timer.cancel()
