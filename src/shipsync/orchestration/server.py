"""The Prefect server `shipsync up` runs: its command, and where its database is, said without a password."""

from __future__ import annotations

import sys
from pathlib import Path

from shipsync.redaction import mask_credentials


def server_command(host: str, port: int) -> list[str]:
    return [sys.executable, "-m", "prefect", "server", "start", "--host", host, "--port", str(port)]


def redacted_database(url: str | None, home: Path) -> str:
    """The database to print: the URL with its credentials masked, or where the default SQLite file is."""
    if not url:
        return f"SQLite {home / 'prefect.db'}"
    return mask_credentials(url)
