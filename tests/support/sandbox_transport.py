"""An in-process way to the sandbox for the client: httpx over the sandbox's ASGI app, with an
optional rewrite of each JSON answer (to serve the answers the real service may send, or bytes that
are not JSON at all) and a record of every exchange (for the contract test)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from shipsync_sandbox import SandboxApp

Rewrite = Callable[[httpx.Request, Any], Any]


@dataclass
class Exchange:
    method: str
    path: str
    status: int
    body: Any


@dataclass
class SandboxTransport(httpx.AsyncBaseTransport):
    """Sends to the sandbox app in process; `rewrite(request, body)` may change each JSON answer (a
    `bytes` result is sent as it is)."""

    app: SandboxApp
    rewrite: Rewrite | None = None
    exchanges: list[Exchange] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._inner = httpx.ASGITransport(app=self.app)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self._inner.handle_async_request(request)
        content = await response.aread()
        body: Any = json.loads(content) if content and "json" in response.headers.get("content-type", "") else None
        if body is not None and self.rewrite is not None:
            body = self.rewrite(request, body)
            content = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.exchanges.append(Exchange(request.method, request.url.path, response.status_code, body))
        headers = [(k, v) for k, v in response.headers.items() if k.lower() != "content-length"]
        return httpx.Response(response.status_code, headers=headers, content=content, request=request)


IN_PROCESS_URL = "http://sandbox.test/v2"
