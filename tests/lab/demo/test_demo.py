"""The README's first command: `shipsync demo` runs every step as a Prefect flow run to the end, and
a second run is the same run; its warehouse holds nothing that happened after it ran."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from shipsync_demo.run import STEPS
from support.lake import analyst

# What happened, by when (an estimate may expect later: its expected time is not checked).
HAPPENED = {
    "actual milestones": "SELECT max(timestamp) FROM transport_events WHERE event NOT LIKE '%.estimated.%'",
    "estimates made": "SELECT greatest(max(created_at), (SELECT max(created_at) FROM transport_events)) FROM estimated_events",
    "notifications": "SELECT max(created_at) FROM webhook_events",
    "arrivals": "SELECT greatest(max(pod_ata_at), max(pol_atd_at), max(destination_ata_at)) FROM shipments",
    "boxes' moves": "SELECT greatest(max(pod_discharged_at), max(pod_full_out_at), max(empty_terminated_at)) FROM containers",
}

ROOT = Path(__file__).resolve().parents[3]
FLOW_RUNS_PER_DEMO = len(STEPS) - 2  # every step but the receiver's start and the simulation


@pytest.mark.slow
def test_demo_runs_its_flows_twice_with_the_same_result(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "SHIPSYNC_"))}
    env["PREFECT_API_URL"] = "http://127.0.0.1:9/api"  # an operator's server, which the demo must not use
    outputs = []
    for _ in range(2):
        started = datetime.now(UTC)
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
        ended = datetime.now(UTC)
    assert outputs[0] == outputs[1] and len(outputs[0]) == len(STEPS)
    assert_nothing_after(tmp_path / "demo" / "warehouse", started, ended)
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


def assert_nothing_after(warehouse: Path, started: datetime, ended: datetime) -> None:
    """Nothing the demo's warehouse holds happened after the demo ran (its sandbox's journeys are
    played up to its now, the hour it started in); and it does hold what they sent."""
    con = analyst(warehouse)
    try:
        found = {what: con.execute(sql).fetchone()[0] for what, sql in HAPPENED.items()}  # type: ignore[index]
    finally:
        con.close()
    late = {what: moment for what, moment in found.items() if moment is not None and moment > ended}
    assert not late, late
    assert found["notifications"] is not None and found["actual milestones"] is not None
    assert found["notifications"] > started - timedelta(days=200)
