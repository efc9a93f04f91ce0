"""Shared fixtures: sandboxes on loopback ports, clients, and a Prefect test harness per session."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

# Prefect must not phone home, and its home must exist before it starts (see README).
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("DO_NOT_TRACK", "1")
_prefect_home = Path(tempfile.mkdtemp(prefix="shipsync-prefect-"))
os.environ.setdefault("PREFECT_HOME", str(_prefect_home))

from shipsync.api import AsyncShipsyncClient  # noqa: E402
from shipsync.api.retry import RetryPolicy  # noqa: E402
from shipsync.config import RateLimit  # noqa: E402
from shipsync.sandbox import SandboxApp, SandboxOptions, create_app  # noqa: E402
from shipsync.serving import BackgroundServer  # noqa: E402

K1, K2 = "test-key-one", "test-key-two"


class RunningSandbox:
    def __init__(self, app: SandboxApp, server: BackgroundServer) -> None:
        self.app = app
        self.server = server
        self.api_url = f"{server.url}/v2"

    @property
    def state(self):  # type: ignore[no-untyped-def]
        return self.app.state

    def client(self, key: str = K1, **kwargs: object) -> AsyncShipsyncClient:
        kwargs.setdefault("rate_limit", None)
        kwargs.setdefault("policy", RetryPolicy(max_retries=6, base_delay=0.01, max_delay=0.2))
        return AsyncShipsyncClient(self.api_url, key, **kwargs)  # type: ignore[arg-type]


SandboxFactory = Callable[..., RunningSandbox]


@pytest.fixture
def make_sandbox() -> Iterator[SandboxFactory]:
    servers: list[BackgroundServer] = []

    def factory(**options: object) -> RunningSandbox:
        options.setdefault("api_keys", (K1, K2))
        options.setdefault("documents", 30)
        options.setdefault("rate_limit", None)
        app = create_app(SandboxOptions(**options))  # type: ignore[arg-type]
        server = BackgroundServer(app).start()
        servers.append(server)
        return RunningSandbox(app, server)

    yield factory
    for server in servers:
        server.stop()


@pytest.fixture
def sandbox(make_sandbox: SandboxFactory) -> RunningSandbox:
    return make_sandbox()


__all__ = ["K1", "K2", "RateLimit", "RunningSandbox", "SandboxFactory"]
