"""Prefect's environment for the processes shipsync starts or runs in: its home folder (which must
exist before Prefect starts), no telemetry, and which API and database it talks to.

Prefect reads its settings once, when it is first imported, so a process turns telemetry off
(`keep_offline`) before importing it; child processes get `prefect_env(...)`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from shipsync.safe_files import PRIVATE_FILE, PRIVATE_FOLDER, private_folder

# This machine has no internet, and an operator's pipeline should not phone home.
TELEMETRY_OFF = {"PREFECT_SERVER_ANALYTICS_ENABLED": "false", "DO_NOT_TRACK": "1"}
# Settings that would point Prefect at another server, database, credential or profile than the one given.
ELSEWHERE = (
    "PREFECT_API_URL",
    "PREFECT_API_KEY",
    "PREFECT_API_AUTH_STRING",
    "PREFECT_SERVER_API_AUTH_STRING",
    "PREFECT_API_DATABASE_CONNECTION_URL",
    "PREFECT_SERVER_DATABASE_CONNECTION_URL",
    "PREFECT_PROFILES_PATH",
    "PREFECT_PROFILE",
)


def keep_offline() -> None:
    """No telemetry from any Prefect this process imports later, unless the operator said otherwise."""
    for name, value in TELEMETRY_OFF.items():
        os.environ.setdefault(name, value)


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
    made_private(home)
    env = {k: v for k, v in (os.environ if base is None else base).items() if k not in ELSEWHERE}
    env.update(TELEMETRY_OFF)
    env["PREFECT_HOME"] = str(home)
    if api_url:
        env["PREFECT_API_URL"] = api_url
    if database_url:
        env["PREFECT_API_DATABASE_CONNECTION_URL"] = database_url
    env.update(extra or {})
    return env


def made_private(folder: Path) -> Path:
    """`folder`, created if missing, ours and readable by nobody else (0700 even if it was not), and
    the files directly in it 0600: Prefect's home holds its database (every flow run's parameters
    and logs, and the key that decrypts its blocks) and the API's credential."""
    private_folder(folder)
    os.chmod(folder, PRIVATE_FOLDER)
    for entry in folder.iterdir():
        if entry.is_file() and not entry.is_symlink():
            os.chmod(entry, PRIVATE_FILE)
    return folder
