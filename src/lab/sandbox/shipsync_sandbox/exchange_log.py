"""The sandbox's record of the API exchanges it answered (`SandboxOptions.record_exchanges`), for
tests that check a client's requests and the sandbox's answers against the service's reference:
each request's method, path, query and body as they arrived, and the status, content type and body
of the answer. Admin routes are not API exchanges and are not recorded."""

from __future__ import annotations

from dataclasses import dataclass, field

from starlette.types import Message, Receive, Scope, Send


@dataclass(frozen=True)
class Exchange:
    method: str
    path: str
    query: str
    request_type: str | None
    request_body: bytes
    status: int
    response_type: str | None
    response_body: bytes


@dataclass
class ExchangeLog:
    exchanges: list[Exchange] = field(default_factory=list)

    def clear(self) -> None:
        self.exchanges.clear()


def _header(headers: list[tuple[bytes, bytes]], name: bytes) -> str | None:
    return next((value.decode("latin-1") for key, value in headers if key.lower() == name), None)


class Recording:
    """Wraps one exchange's receive and send, keeping what passed through them."""

    def __init__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.scope, self._receive, self._send = scope, receive, send
        self.request_body = bytearray()
        self.response_body = bytearray()
        self.status = 0
        self.response_type: str | None = None

    async def receive(self) -> Message:
        message = await self._receive()
        if message["type"] == "http.request":
            self.request_body += message.get("body", b"")
        return message

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.status = message["status"]
            self.response_type = _header(list(message.get("headers") or []), b"content-type")
        elif message["type"] == "http.response.body":
            self.response_body += message.get("body", b"")
        await self._send(message)

    def exchange(self) -> Exchange:
        headers = list(self.scope.get("headers") or [])
        return Exchange(
            method=self.scope["method"],
            path=self.scope["path"],
            query=self.scope.get("query_string", b"").decode("latin-1"),
            request_type=_header(headers, b"content-type"),
            request_body=bytes(self.request_body),
            status=self.status,
            response_type=self.response_type,
            response_body=bytes(self.response_body),
        )
