"""Serving an ASGI app (the sandbox, a webhook receiver) on uvicorn in a background thread, on a
free loopback port: for the tests, the benchmarks and the demo, never the product."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from contextlib import suppress
from types import TracebackType
from typing import Any, Self

import uvicorn
from starlette.types import ASGIApp


class _PromptServer(uvicorn.Server):
    """uvicorn's server, stopped at once: uvicorn notices `should_exit` on a 0.1 s tick and then
    waits 0.1 s more for open connections even when there are none, which made every stop cost
    0.1-0.2 s of waiting (over a hundred servers in the test suite)."""

    _loop: asyncio.AbstractEventLoop | None = None
    _wake: asyncio.Event | None = None

    async def main_loop(self) -> None:
        self._loop, self._wake = asyncio.get_running_loop(), asyncio.Event()
        counter = 0
        while not await self.on_tick(counter):
            counter = (counter + 1) % 864000
            with suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), 0.1)  # the tick uvicorn keeps (date header, limits)

    def wake(self) -> None:
        """From another thread: look at `should_exit` now rather than at the next tick."""
        loop, wake = self._loop, self._wake
        if loop is not None and wake is not None:
            with suppress(RuntimeError):  # the loop has already finished
                loop.call_soon_threadsafe(wake.set)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        if self.server_state.connections or self.server_state.tasks:
            await super().shutdown(sockets)  # uvicorn's graceful shutdown lets them finish
            return
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        if not self.force_exit:
            await self.lifespan.shutdown()


class BackgroundServer:
    """`with BackgroundServer(app) as server: server.url` — stops cleanly on exit. `settings` go to
    uvicorn (e.g. a connection guard's, `ConnectionGuard.uvicorn_settings`)."""

    def __init__(self, app: ASGIApp, host: str = "127.0.0.1", port: int = 0, **settings: Any) -> None:
        self.app = app
        self.host = host
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._socket.bind((host, port))
        self.port: int = self._socket.getsockname()[1]
        defaults: dict[str, Any] = {
            "loop": "uvloop",
            "http": "httptools",
            "lifespan": "off",
            "access_log": False,
            "log_level": "critical",
            "timeout_graceful_shutdown": 2,
        }
        config = uvicorn.Config(app, **(defaults | settings))
        self._server = _PromptServer(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._socket]}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> Self:
        self._thread.start()
        deadline = time.monotonic() + 15
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"server on {self.url} did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        self._server.wake()
        self._thread.join(timeout=10)
        self._socket.close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        port: int = probe.getsockname()[1]
        return port
