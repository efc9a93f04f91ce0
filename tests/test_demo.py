"""The README's first command: `shipsync demo` runs to the end, and a second run is the same run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest


@pytest.mark.slow
def test_demo_runs_twice_with_the_same_result(tmp_path: Path) -> None:
    env = {**os.environ, "PREFECT_SERVER_ANALYTICS_ENABLED": "false"}
    outputs = []
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "-m", "shipsync", "demo", "--workdir", str(tmp_path / "demo")],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        assert "Traceback" not in done.stdout + done.stderr and "error" not in done.stderr.lower()
        outputs.append([line.split(" (")[0] for line in done.stdout.splitlines() if line.startswith("✓") and "undo run" not in line])
    assert outputs[0] == outputs[1] and len(outputs[0]) == 10
    con = duckdb.connect(str(tmp_path / "demo" / "shipsync.duckdb"), read_only=True)
    milestones = con.execute("SELECT count(*) FROM container_milestones").fetchone()
    secrets_in_db = con.execute("SELECT count(*) FROM webhooks WHERE CAST(headers AS VARCHAR) ILIKE '%secret%'").fetchone()
    con.close()
    assert milestones and milestones[0] > 100 and secrets_in_db == (0,)
    assert oct((tmp_path / "demo" / "secrets.json").stat().st_mode)[-3:] == "600"
