"""An operator's first `shipsync up`: on an empty warehouse it pulls everything at once (not at
02:00) and says so, and `shipsync status` then shows the warehouse; a receiver whose settings can
never work is kept stopped with one line saying why, which status shows too, instead of being
started again and again. With --no-first-pull, nothing is pulled."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from shipsync_bench.processes import SandboxProcess, UpProcess
from support.prefect_up import KEY, ROOT, query, up_env, wait_for

pytestmark = pytest.mark.slow


def status(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "shipsync", "status"]
    wide = {**env, "COLUMNS": "500"}  # each line whole
    return subprocess.run(command, env=wide, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)


def test_a_first_up_pulls_everything_and_keeps_a_receiver_that_cannot_work_stopped(tmp_path: Path) -> None:
    with SandboxProcess("--documents", "10", "--api-key", KEY) as sandbox:
        # A webhook secret, but a spool in a folder that does not exist (and that nothing makes).
        spool = tmp_path / "no" / "spool"
        env = up_env(tmp_path, sandbox.api_url, SHIPSYNC_WEBHOOK_SECRETS="a-secret-of-the-operator", SHIPSYNC_SPOOL=str(spool))
        warehouse = Path(env["SHIPSYNC_WAREHOUSE"])
        up = UpProcess(env=env, cwd=ROOT).start()
        try:
            assert "the warehouse has no pulled data yet: pulling everything now (pull-all" in up.output, up.output
            refused = f"receiver not started: {spool}: its folder {spool.parent} does not exist"
            assert refused in up.output, up.output
            # Nobody ran a pull: up's first one fills the warehouse.
            wait_for(lambda: _documents(warehouse) == 10, "the first pull's documents", timeout_s=900, every_s=2)
            shown = status(env)
            assert shown.returncode == 0, shown.stdout + shown.stderr
            assert "no warehouse" not in shown.stdout + shown.stderr and "pull_documents" in shown.stdout, shown.stdout
            assert f"error: {refused}" in shown.stdout, shown.stdout
            assert "receiver exited" not in up.output and up.output.count("receiver not started") == 1, up.output
        finally:
            up.stop(timeout_s=300)
        # Started again on a warehouse with data, or told not to: no first pull.
        again = UpProcess("--no-first-pull", env={**env, "SHIPSYNC_WAREHOUSE": str(tmp_path / "elsewhere")}, cwd=ROOT).start()
        try:
            assert "pulling everything now" not in again.output, again.output
        finally:
            again.stop(timeout_s=300)


def _documents(warehouse: Path) -> int | None:
    """The warehouse's documents; None while the first pull has made its catalog but not its tables."""
    try:
        count: int = query(warehouse, "SELECT count(*) FROM documents", timeout_s=900)[0][0]
    except duckdb.CatalogException:
        return None
    return count
