"""The warehouse's upkeep as `shipsync up` deploys it: prefect.yaml schedules DuckLake's maintenance
daily and the event log's catch-up hourly, and a run of the maintenance flow through a real Prefect
maintains a lake (snapshots expired, small files merged) and is recorded in the ledger."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import yaml

from shipsync_demo.embedded_prefect import load_flow
from support.lake import analyst, sql_now

ROOT = Path(__file__).resolve().parents[2]


def deployment(name: str) -> dict[str, Any]:
    project = yaml.safe_load((ROOT / "prefect.yaml").read_text())
    found: list[dict[str, Any]] = [d for d in project["deployments"] if d["name"] == name]
    assert len(found) == 1, f"prefect.yaml has {len(found)} deployment(s) named {name}"
    return found[0]


@pytest.mark.parametrize(
    ("name", "flow", "cron"),
    [("maintain-warehouse", "maintain_warehouse", "0 6 * * *"), ("catch-up-events", "catch_up_events", "40 * * * *")],
)
def test_prefect_yaml_schedules_the_upkeep(name: str, flow: str, cron: str) -> None:
    found = deployment(name)
    assert found["schedules"] == [{"cron": cron, "timezone": "UTC"}]
    assert found["parameters"] == {}  # retention from SHIPSYNC_SNAPSHOT_RETENTION_DAYS, start from the lake
    assert load_flow(ROOT, found["entrypoint"]).name == flow


@pytest.mark.slow
def test_the_maintenance_flow_maintains_a_lake(prefect_harness: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from flows.warehouse import maintain_warehouse

    lake = tmp_path / "warehouse"
    monkeypatch.setenv("SHIPSYNC_WAREHOUSE", str(lake))
    for number in range(12):  # twelve small commits: twelve snapshots, each a small file
        sql_now(lake, "INSERT INTO webhooks (id, url, active) VALUES (?, 'http://x/webhook', true)", [f"w-{number}"])
    with analyst(lake) as con:
        before = con.execute(f"SELECT count(*) FROM ducklake_snapshots('{con.alias}')").fetchone()
    # The snapshots made years ago, as the catalog says: older than the shortest retention, a day.
    with sqlite3.connect(lake / "catalog.sqlite") as catalog:
        catalog.execute("UPDATE ducklake_snapshot SET snapshot_time = '2020-01-01 00:00:00+00'")
    expired = asyncio.run(maintain_warehouse(retention_days=1))  # type: ignore[arg-type]
    with analyst(lake) as con:
        after = con.execute(f"SELECT count(*) FROM ducklake_snapshots('{con.alias}')").fetchone()
        ids = con.execute("SELECT id FROM webhooks ORDER BY id").fetchall()
        runs = con.execute("SELECT status, prefect_flow_run_id FROM sync_runs WHERE flow = 'maintain_warehouse'").fetchall()
    assert before is not None and after is not None and expired >= 12 and after[0] < before[0]
    assert sorted(i[0] for i in ids) == sorted(f"w-{n}" for n in range(12))
    assert len(runs) == 1 and runs[0][0] == "completed" and runs[0][1] is not None
