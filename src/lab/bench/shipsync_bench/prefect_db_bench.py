"""Prefect's database under the pipeline's load: the same concurrent flow runs drawing the shared
rate budget (see `prefect_load`) against a Prefect server on SQLite, its default, and on PostgreSQL
(a temporary server of the host's PostgreSQL). SQLite serializes writers and the server answers
503 when a write finds the file locked (the client retries it after a pause); PostgreSQL does not.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from shipsync.orchestration.api_auth import PrefectApi
from shipsync_bench.postgres import TemporaryPostgres
from shipsync_bench.processes import PrefectServerProcess, prefect_load
from shipsync_bench.results import BenchResult


def prefect_databases(flows: int = 8, requests: int = 60) -> list[BenchResult]:
    with tempfile.TemporaryDirectory(prefix="shipsync-bench-prefect-db-") as tmp:
        root = Path(tmp)
        with PrefectServerProcess(root / "sqlite") as server:
            sqlite = prefect_load(PrefectApi(server.api_url), root / "sqlite", flows, requests)
        with TemporaryPostgres() as postgres, PrefectServerProcess(root / "postgres", postgres.url) as server:
            on_postgres = prefect_load(PrefectApi(server.api_url), root / "postgres", flows, requests)
    load = f"{flows} concurrent flow runs x {requests} budget draws"
    return [
        BenchResult(
            f"Prefect API 503s on PostgreSQL, {load} ({on_postgres['api_requests']:.0f} API requests)",
            on_postgres["answered_503"],
            "503s",
            f"SQLite, same load ({sqlite['api_requests']:.0f} API requests)",
            sqlite["answered_503"],
            None,
            "0 on PostgreSQL",
            on_postgres["answered_503"] == 0 and on_postgres["completed"] == flows,
        ),
        BenchResult(
            f"wall time of that load on PostgreSQL (context; SQLite all completed: {sqlite['completed'] == flows})",
            on_postgres["seconds"],
            "s",
            "SQLite, same load",
            sqlite["seconds"],
            on_postgres["seconds"] / sqlite["seconds"],
            "(context)",
            True,
        ),
    ]
