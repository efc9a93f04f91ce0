"""A throwaway PostgreSQL server for tests and benchmarks: the host's PostgreSQL binaries (Debian's
`postgresql` package: /usr/lib/postgresql/N/bin), a temporary data directory, a private port on
loopback and a socket folder of its own; run as the `postgres` user when started by root (PostgreSQL
refuses to run as root); everything removed when it stops.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import tempfile
from pathlib import Path
from types import TracebackType
from typing import Self

from shipsync_sandbox.serving import free_port

DATABASE, USER = "prefect", "shipsync"


def postgres_bin() -> Path | None:
    """The newest installed PostgreSQL's bin folder, or None."""
    versions = [p for p in Path("/usr/lib/postgresql").glob("*/bin/pg_ctl") if p.parent.parent.name.isdigit()]
    found = sorted(versions, key=lambda p: int(p.parent.parent.name))
    if found:
        return found[-1].parent
    on_path = shutil.which("pg_ctl")
    return Path(on_path).parent if on_path else None


class TemporaryPostgres:
    """`with TemporaryPostgres() as pg: pg.url` — a fresh server with database `prefect`, user `shipsync`."""

    def __init__(self) -> None:
        bin_dir = postgres_bin()
        if bin_dir is None:
            raise RuntimeError("no PostgreSQL here: install Debian's postgresql package (pg_ctl in /usr/lib/postgresql/N/bin)")
        self.bin = bin_dir
        self.port = free_port()
        self.password = secrets.token_hex(12)
        self.root = Path(tempfile.mkdtemp(prefix="shipsync-pg-"))
        self.data = self.root / "data"
        self._as_postgres = os.geteuid() == 0

    @property
    def url(self) -> str:
        """The SQLAlchemy URL Prefect's server takes (PREFECT_API_DATABASE_CONNECTION_URL)."""
        return f"postgresql+asyncpg://{USER}:{self.password}@127.0.0.1:{self.port}/{DATABASE}"

    def _run(self, *command: str, stdin: str | None = None) -> None:
        argv = [str(self.bin / command[0]), *command[1:]]
        if self._as_postgres:
            argv = ["runuser", "-u", "postgres", "--", *argv]
        done = subprocess.run(argv, input=stdin, text=True, capture_output=True, cwd=self.root, timeout=120, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{command[0]} failed (exit {done.returncode}): {(done.stderr or done.stdout).strip()[-500:]}")

    def __enter__(self) -> Self:
        if self._as_postgres:
            shutil.chown(self.root, "postgres")
        try:
            # Local socket: trusted (only this user can reach the private socket folder); TCP: password.
            self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8")
            # Dynamic shared memory as files in the data directory (removed with it), not in /dev/shm,
            # where a server that is killed rather than stopped would leave its segments.
            options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c max_connections=200"
            options += " -c dynamic_shared_memory_type=mmap"
            self._run("pg_ctl", "-D", str(self.data), "-o", options, "-l", str(self.root / "server.log"), "-w", "-t", "120", "start")
            role = f"CREATE ROLE {USER} LOGIN PASSWORD '{self.password}'"
            database = f"CREATE DATABASE {DATABASE} OWNER {USER}"  # not in a transaction: its own -c
            connection = ["-h", str(self.root), "-p", str(self.port), "-U", "postgres", "-v", "ON_ERROR_STOP=1"]
            self._run("psql", *connection, "-c", role, "-c", database)
        except BaseException:
            self.stop()
            raise
        return self

    def execute(self, *statements: str, database: str = "postgres") -> None:
        """Run `statements` as the superuser, over the private socket (each its own transaction)."""
        connection = ["-h", str(self.root), "-p", str(self.port), "-U", "postgres", "-d", database, "-v", "ON_ERROR_STOP=1"]
        self._run("psql", *connection, *(arg for statement in statements for arg in ("-c", statement)))

    def stop(self) -> None:
        """Fast shutdown (connections cut, no checkpoint wait), then the files go."""
        if (self.data / "postmaster.pid").exists():
            try:
                self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "-t", "10", "stop")
            except (RuntimeError, subprocess.SubprocessError):
                self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "-t", "10", "stop")
        shutil.rmtree(self.root, ignore_errors=True)

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()
