"""`pull all`, `apply` and `undo` as a user runs them, each in a process of its own: standard error
stays empty at the default level (no leak report from a native binding at exit, no library's INFO
lines, no link to a Prefect server), and standard output says what happened.

The leak report (`nanobind: leaked N instances!`, about 40 lines at the end of each) came from the
DuckDB binding before 1.5: DuckDB 1.5.5's is built without nanobind, and no other binding installed
here has it, so the report cannot come back without a dependency change this test would catch."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from support.lake import analyst
from support.sandboxes import RunningSandbox, shipsync_env


def shipsync(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "shipsync", *args], capture_output=True, text=True, env=env, timeout=180, check=False)


# Slow: three commands, each paying a fresh process's imports (about 15 s each on a busy machine).
@pytest.mark.slow
def test_pull_apply_and_undo_leave_standard_error_empty(sandbox: RunningSandbox, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "SHIPSYNC_"))}
    env.update(shipsync_env(sandbox.api_url, tmp_path / "warehouse", spool=str(tmp_path / "spool"), shared_budget="off"))
    pulled = shipsync(env, "pull", "all")
    assert pulled.returncode == 0, pulled.stderr[-2000:]
    con = analyst(tmp_path / "warehouse")
    [(number,)] = con.execute("SELECT number FROM containers ORDER BY id LIMIT 1").fetchall()
    con.close()
    sheet = tmp_path / "tags.csv"
    sheet.write_text(f"container_number,po_number\n{number},PO-QUIET\n")
    applied = shipsync(env, "apply", "custom-fields", str(sheet))
    assert applied.returncode == 0, applied.stderr[-2000:]
    con = analyst(tmp_path / "warehouse")
    [(run_id,)] = con.execute("SELECT run_id FROM sync_runs WHERE flow = 'apply_custom_fields' ORDER BY started_at DESC LIMIT 1").fetchall()
    con.close()
    undone = shipsync(env, "apply", "undo", str(run_id))
    assert undone.returncode == 0, undone.stderr[-2000:]
    for done in (pulled, applied, undone):
        assert done.stderr == "", f"{done.args[3:]} wrote to standard error:\n{done.stderr[:3000]}"
        assert done.stdout.strip(), done.args
    assert "pull_documents completed" in pulled.stdout
    assert "1 applied" in applied.stdout and "1 applied" in undone.stdout
