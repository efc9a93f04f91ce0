"""Prefect's server on PostgreSQL (a real PostgreSQL server this test starts and stops itself, from
the host's Debian `postgresql` package), brought up by `shipsync up --database-url`: the pipeline's
load (concurrent flow runs drawing the shared rate budget, logging, taking the warehouse slot) gets
no 503 from it. The same load on a Prefect server with its default SQLite database, for comparison,
is a benchmark (`shipsync bench --only prefect-db`), not part of this test."""

from __future__ import annotations

import pytest

from shipsync_bench.postgres import TemporaryPostgres, postgres_bin
from shipsync_bench.processes import UpProcess, prefect_load
from support.prefect_up import ROOT, up_env

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(postgres_bin() is None, reason="needs PostgreSQL's server binaries: apt-get install -y postgresql"),
]
FLOWS, REQUESTS = 8, 60


def test_up_on_postgres_answers_the_pipelines_load_without_503s(tmp_path_factory: pytest.TempPathFactory) -> None:
    tmp = tmp_path_factory.mktemp("prefect-db")
    with TemporaryPostgres() as postgres:
        env = up_env(tmp, "http://127.0.0.1:9/v2")  # no service needed: the load only talks to Prefect
        up = UpProcess("--database-url", postgres.url, env=env, cwd=ROOT).start()
        try:
            on_postgres = prefect_load(up.prefect_api, tmp / "postgres-client", FLOWS, REQUESTS)
        finally:
            up.stop()
    # Where up said its database is: PostgreSQL, its password never printed.
    assert f"postgresql+asyncpg://shipsync:***@127.0.0.1:{postgres.port}/prefect" in up.output
    assert postgres.password not in up.output + (tmp / "state" / "logs" / "server.log").read_text(errors="replace")
    # The same load on SQLite (its 503s beside these) is measured by `shipsync bench --only prefect-db`.
    print(f"\n{FLOWS} flow runs x {REQUESTS} budget draws: PostgreSQL {on_postgres}")
    assert on_postgres["completed"] == FLOWS and on_postgres["budget_acquisitions"] == FLOWS * REQUESTS
    assert on_postgres["api_requests"] > FLOWS * REQUESTS  # every draw went to the server, and more
    assert on_postgres["answered_503"] == 0
