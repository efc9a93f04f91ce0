"""Prefect's environment for the processes shipsync starts or runs in: its home folder (which must
exist before Prefect starts), no telemetry, and which API and database it talks to.

Prefect reads its settings once, when it is first imported, so a process points itself at a home
with `use_prefect_home` before importing it; child processes get `prefect_env(...)`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

from shipsync.safe_files import make_folders

# This machine has no internet, and an operator's pipeline should not phone home.
TELEMETRY_OFF = {"PREFECT_SERVER_ANALYTICS_ENABLED": "false", "DO_NOT_TRACK": "1"}
# Settings that would point Prefect at another server, database or profile than the one given.
ELSEWHERE = (
    "PREFECT_API_URL",
    "PREFECT_API_KEY",
    "PREFECT_API_DATABASE_CONNECTION_URL",
    "PREFECT_SERVER_DATABASE_CONNECTION_URL",
    "PREFECT_PROFILES_PATH",
    "PREFECT_PROFILE",
)


def prefect_env(
    home: Path,
    *,
    api_url: str | None = None,
    database_url: str | None = None,
    base: Mapping[str, str] | None = None,
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The environment of a Prefect process with its home at `home` (created), talking to `api_url`
    (a server's, or none for a server itself) and storing in `database_url` (default: SQLite in home)."""
    make_folders(home)
    env = {k: v for k, v in (os.environ if base is None else base).items() if k not in ELSEWHERE}
    env.update(TELEMETRY_OFF)
    env["PREFECT_HOME"] = str(home)
    if api_url:
        env["PREFECT_API_URL"] = api_url
    if database_url:
        env["PREFECT_API_DATABASE_CONNECTION_URL"] = database_url
    env.update(extra or {})
    return env


def use_prefect_home(home: Path, extra: Mapping[str, str] | None = None) -> None:
    """Point this process's Prefect at `home`, its own: call before Prefect is first imported."""
    if "prefect" in sys.modules:
        raise RuntimeError("Prefect is already imported: its home can no longer change in this process")
    for name in ELSEWHERE:
        os.environ.pop(name, None)
    os.environ.update(prefect_env(home, base={}, extra=extra))
