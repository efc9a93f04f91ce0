"""The README's first command: `shipsync demo` runs every step as a Prefect flow run to the end, and
a second run is the same run."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from shipsync_demo.run import STEPS
from support.lake import analyst

ROOT = Path(__file__).resolve().parents[3]
FLOW_RUNS_PER_DEMO = len(STEPS) - 2  # every step but the receiver's start and the simulation


@pytest.mark.slow
def test_demo_runs_its_flows_twice_with_the_same_result(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "SHIPSYNC_"))}
    env["PREFECT_API_URL"] = "http://127.0.0.1:9/api"  # an operator's server, which the demo must not use
    outputs = []
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "-m", "shipsync", "demo", "--workdir", str(tmp_path / "demo")],
            cwd=ROOT,  # the project folder, whose flows/ the demo runs
            capture_output=True,
            text=True,
            env=env,
            timeout=600,
            check=False,
        )
        # The last steps it printed, where the traceback starts, and where it ends.
        assert done.returncode == 0, "\n".join([done.stdout[-1500:], done.stderr[:3000], "...", done.stderr[-1500:]])
        assert "Traceback" not in done.stdout + done.stderr and "error" not in done.stderr.lower()
        # No library's INFO lines, and no link to the embedded Prefect server, which is gone by the end.
        chatter = [line for line in done.stderr.splitlines() if " INFO " in line or "View at" in line]
        assert not chatter, "\n".join(chatter[:10])
        outputs.append([line.split(" (")[0] for line in done.stdout.splitlines() if line.startswith("✓")])
        assert "Prefect flow runs" in done.stdout and "prefect server start" in done.stdout
        assert "Containers at risk (pickup_risk)" in done.stdout
    assert outputs[0] == outputs[1] and len(outputs[0]) == len(STEPS)
    # The flow runs are in the demo's own Prefect database, to browse in the UI: both demos' runs.
    prefect_db = sqlite3.connect(tmp_path / "demo" / "prefect" / "prefect.db")
    states = dict(prefect_db.execute("SELECT state_type, count(*) FROM flow_run GROUP BY 1").fetchall())
    artifacts = {key for (key,) in prefect_db.execute("SELECT DISTINCT key FROM artifact WHERE key IS NOT NULL")}
    prefect_db.close()
    assert states == {"COMPLETED": 2 * FLOW_RUNS_PER_DEMO}
    assert {"pull-all", "apply-custom-fields", "apply-undo", "report", "report-summary"} <= artifacts
    assert (tmp_path / "demo" / "report.html").stat().st_size > 10_000
    con = analyst(tmp_path / "demo" / "warehouse")
    milestones = con.execute("SELECT count(*) FROM container_milestones").fetchone()
    secrets_in_db = con.execute("SELECT count(*) FROM webhooks WHERE CAST(headers AS VARCHAR) ILIKE '%secret%'").fetchone()
    flow_runs = con.execute("SELECT count(DISTINCT prefect_flow_run_id) FROM sync_runs").fetchone()
    con.close()
    assert milestones and milestones[0] > 100 and secrets_in_db == (0,)
    assert flow_runs == (FLOW_RUNS_PER_DEMO - 1,)  # all but the report keep a ledger row
    assert oct((tmp_path / "demo" / "secrets.json").stat().st_mode)[-3:] == "600"
