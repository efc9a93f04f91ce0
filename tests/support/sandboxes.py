"""A sandbox on a loopback port as the tests see it, its API keys, and settings (or SHIPSYNC_* variables) pointing at it."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from shipsync.api import AsyncShipsyncClient
from shipsync.api.retry import RetryPolicy
from shipsync.config import Settings
from shipsync_sandbox import SandboxApp
from shipsync_sandbox.serving import BackgroundServer

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


def shipsync_env(api_url: str, warehouse: Path | str, key: str = K1, **more: str) -> dict[str, str]:
    """The SHIPSYNC_* variables a command or flow needs to pull from a sandbox into `warehouse`,
    unthrottled; `more` adds others by their name after the prefix (e.g. spool=..., shared_budget="off")."""
    env = {"SHIPSYNC_API_URL": api_url, "SHIPSYNC_API_KEY": key, "SHIPSYNC_WAREHOUSE": str(warehouse), "SHIPSYNC_RATE_LIMIT": "0"}
    return env | {f"SHIPSYNC_{name.upper()}": value for name, value in more.items()}


def settings_for(sandbox: RunningSandbox, warehouse: Path, key: str = K1, **overrides: object) -> Settings:
    """Settings pointing at a sandbox and a warehouse (a lake folder), with fast retries."""
    from shipsync.config import load_settings

    values: dict[str, object] = {
        "api_url": sandbox.api_url,
        "api_key": key,
        "warehouse": warehouse,
        "rate_limit": "0",
        "retry_base_delay": 0.01,
        "max_retries": 6,
    }
    values.update(overrides)
    return load_settings(**values)


def pulled_sandbox(sandbox: RunningSandbox, warehouse: Path) -> tuple[RunningSandbox, Settings]:
    """The sandbox and settings of a warehouse that pulled all its documents (and their containers)."""
    from shipsync.pull.documents import pull_documents

    settings = settings_for(sandbox, warehouse)
    pull_documents(settings, all_documents=True)
    return sandbox, settings


class PulledCopies:
    """`pulled_sandbox` for a sandbox nobody has changed yet, once per set of sandbox options: the
    sandbox builds the same world from the same options, so after the first pull a test gets a copy
    of that pull's lake folder (its catalog and data files: an embedded lake is a folder that can be
    copied whole). The copy is the test's own, as a pulled lake would be."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._folders: dict[object, Path] = {}

    def pulled(self, sandbox: RunningSandbox, warehouse: Path) -> tuple[RunningSandbox, Settings]:
        options = sandbox.state.options
        cached = self._folders.get(options)
        if cached is None:
            pulled_sandbox(sandbox, warehouse)
            cached = self.root / f"pulled-{len(self._folders)}"
            shutil.copytree(warehouse, cached)
            self._folders[options] = cached
            return sandbox, settings_for(sandbox, warehouse)
        shutil.copytree(cached, warehouse)
        return sandbox, settings_for(sandbox, warehouse)


def service_values(sandbox: RunningSandbox) -> dict[tuple[str, str], object]:
    """The custom field values the sandbox holds for K1, by (entity id, field slug)."""
    account = sandbox.state.world.accounts[K1]
    return {
        (cf["relationships"]["entity"]["data"]["id"], cf["attributes"]["api_slug"]): cf["attributes"]["value"]
        for cf in account.custom_fields.values()
    }
