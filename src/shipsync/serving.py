"""Run an ASGI app on uvicorn (uvloop + httptools) in a background thread, on a free loopback port;
wait for a server process to answer, and stop one promptly."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import threading
import time
from contextlib import suppress
from types import TracebackType
from typing import Any, Self

import httpx
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
    """`with BackgroundServer(app) as server: server.url` — stops cleanly on exit."""

    def __init__(self, app: ASGIApp, host: str = "127.0.0.1", port: int = 0, http: type[asyncio.Protocol] | None = None) -> None:
        self.app = app
        self.host = host
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._socket.bind((host, port))
        self.port: int = self._socket.getsockname()[1]
        config = uvicorn.Config(
            app,
            loop="uvloop",
            http=http or "httptools",  # or a protocol class, such as the receiver's limits
            lifespan="off",
            access_log=False,
            log_level="critical",
            timeout_graceful_shutdown=2,
        )
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


def wait_until_answers(url: str, process: subprocess.Popen[bytes], timeout_s: float = 60) -> None:
    """Poll `url` until it answers 200; RuntimeError if the process exits or time runs out."""
    deadline = time.monotonic() + timeout_s
    # One client for every poll: a new one per poll builds an SSL context (~60 ms of CPU), which at
    # 20 polls a second takes a core from the very server being waited for.
    with httpx.Client(timeout=1) as client:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"server for {url} exited with status {process.returncode}")
            try:
                if client.get(url).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
    process.kill()
    raise RuntimeError(f"server for {url} did not start within {timeout_s:.0f} s")


STOP_GRACE_S = 8.0


def stop_process(process: subprocess.Popen[Any], grace_s: float = STOP_GRACE_S, *, group: bool = False) -> bool:
    """Ask a process to stop (SIGTERM), and kill it if it has not within `grace_s`; True if it stopped
    on its own. With `group`, the whole process group it leads (started with start_new_session)
    gets the signals, so children it spawned (a worker's flow runs) stop with it. Never raises for
    a slow stop: whatever happens, the process is gone when this returns.
    """
    if process.poll() is not None:
        return True
    _signal(process, signal.SIGTERM, group)
    try:
        process.wait(timeout=grace_s)
        stopped = True
    except subprocess.TimeoutExpired:
        stopped = False
    if group or not stopped:
        # Children of a group leader that exited may still be running: they go too.
        _signal(process, signal.SIGKILL, group)
    process.wait()
    return stopped


def stop_and_read(process: subprocess.Popen[str], grace_s: float = STOP_GRACE_S) -> tuple[str, str]:
    """`stop_process` for a process whose output is piped: its stdout and stderr, read while it stops
    (waiting without reading could leave it blocked on a full pipe). Never raises for a slow stop."""
    process.terminate()
    try:
        return process.communicate(timeout=grace_s)
    except subprocess.TimeoutExpired:
        process.kill()
        return process.communicate()


def _signal(process: subprocess.Popen[Any], signum: int, group: bool) -> None:
    try:
        if group:
            os.killpg(process.pid, signum)
        else:
            process.send_signal(signum)
    except (ProcessLookupError, PermissionError):
        pass
