"""What the tests of `shipsync up` share: its environment, flow runs started from deployments and
waited for, and reads of the Prefect API over HTTP (as up reads it, without importing Prefect), each
with the credential up's API requires."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import duckdb
import httpx

from shipsync.errors import WarehouseError
from shipsync.orchestration.api_auth import PrefectApi
from shipsync.orchestration.deployments import request_patiently
from support.lake import analyst
from support.sandboxes import shipsync_env
from support.waiting import wait_for as wait_for  # where the tests of up have found it

ROOT = Path(__file__).resolve().parents[2]
KEY = "sandbox-key-1"

RUN = """
import json, sys, asyncio
from prefect.deployments import run_deployment
from prefect.client.orchestration import get_client
runs = [run_deployment(name, timeout=0, **options) for name, options in json.loads(sys.argv[1])]
async def wait():
    async with get_client() as client:
        while True:
            states = [(await client.read_flow_run(r.id)).state for r in runs]
            if all(s and s.is_final() for s in states):
                return [[str(r.id), s.type.value] for r, s in zip(runs, states)]
            await asyncio.sleep(1)
print(json.dumps(asyncio.run(wait())))
"""


def up_env(tmp: Path, api_url: str, **extra: str) -> dict[str, str]:
    """A clean environment for up and its clients: SHIPSYNC_* for a sandbox, a warehouse and a webhook
    secrets store under `tmp` (never the user's)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "SHIPSYNC_"))}
    env.update(
        {
            "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
            "PREFECT_HOME": str(tmp / "client-home"),
            "PREFECT_WORKER_QUERY_SECONDS": "2",  # scheduled runs start sooner than the default 10 s
            **shipsync_env(api_url, tmp / "warehouse", KEY, rate_limit="20/2", state_dir=str(tmp / "state")),
            "SHIPSYNC_SECRETS_FILE": str(tmp / "config" / "secrets.json"),
        }
    )
    env.update(extra)
    return env


def run_deployments(env: dict[str, str], prefect_api: PrefectApi, runs: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, str]]:
    """Start flow runs of deployments (name, run_deployment options) and wait for them: (id, state)."""
    done = subprocess.run(
        [sys.executable, "-c", RUN, json.dumps(runs)],
        env={**env, **prefect_api.client_env()},
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return [(run_id, state) for run_id, state in json.loads(done.stdout.strip().splitlines()[-1])]


def api(prefect_api: PrefectApi, path: str, body: dict[str, Any]) -> Any:
    """POST to up's Prefect API, again while its SQLite database is busy (503), as up itself does."""
    return request_patiently(prefect_api, "POST", path, body).json()


def query(warehouse: Path, sql: str, timeout_s: float = 120) -> list[tuple[Any, ...]]:
    """Read the warehouse between runs (a run holding it makes a reader wait, as an analyst would)."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            con = analyst(warehouse)
        except (duckdb.Error, WarehouseError):  # not created yet, or held by a writer
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)
            continue
        try:
            return con.execute(sql).fetchall()
        finally:
            con.close()


def answers(url: str) -> bool:
    """Whether `url` answers 200 now (a server's health probe)."""
    try:
        return httpx.get(url, timeout=5).status_code == 200
    except httpx.HTTPError:
        return False
