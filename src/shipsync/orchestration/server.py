"""The Prefect server `shipsync up` runs: its command, and where its database is, said without a password."""

from __future__ import annotations

import sys
from pathlib import Path


def server_command(host: str, port: int) -> list[str]:
    return [sys.executable, "-m", "prefect", "server", "start", "--host", host, "--port", str(port)]


def redacted_database(url: str | None, home: Path) -> str:
    """The database to print: the URL without its password, or where the default SQLite file is."""
    if not url:
        return f"SQLite {home / 'prefect.db'}"
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # a URL SQLAlchemy cannot read: Prefect will say so; print nothing of it
        return "(the given --database-url)"
