"""A real Prefect server and worker: deployments from prefect.yaml run pull_all and load_events
against a sandbox, and two concurrent flow runs on one API key share one rate budget."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import duckdb
import httpx
import pytest

from shipsync.bench.processes import SandboxProcess
from shipsync.sandbox.reference import METRO_AREAS
from shipsync.serving import free_port

ROOT = Path(__file__).resolve().parents[1]
KEY = "sandbox-key-1"
LOCODES = [code for code, *_ in METRO_AREAS]

RUN = """
import json, sys, asyncio
from prefect.deployments import run_deployment
names = json.loads(sys.argv[1])
runs = [run_deployment(name, parameters=params, timeout=0) for name, params in names]
from prefect.client.orchestration import get_client
async def wait():
    async with get_client() as client:
        while True:
            states = [(await client.read_flow_run(r.id)).state for r in runs]
            if all(s and s.is_final() for s in states):
                return [s.type.value for s in states]
            await asyncio.sleep(1)
print(json.dumps(asyncio.run(wait())))
"""


@pytest.fixture(scope="module")
def prefect_server() -> Iterator[dict[str, str]]:
    home = Path(tempfile.mkdtemp(prefix="shipsync-prefect-server-"))
    port = free_port()
    env = {
        **os.environ,
        "PREFECT_HOME": str(home),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_API_URL": f"http://127.0.0.1:{port}/api",
    }
    env.pop("PREFECT_API_DATABASE_CONNECTION_URL", None)
    server = subprocess.Popen(
        [sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=home,
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.5)
        else:
            raise RuntimeError("prefect server did not start")
        yield env
    finally:
        server.terminate()
        server.wait(timeout=30)


def run_deployments(env: dict[str, str], runs: list[tuple[str, dict[str, object]]]) -> list[str]:
    done = subprocess.run([sys.executable, "-c", RUN, json.dumps(runs)], env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_deployments_on_a_real_server_and_worker_share_one_rate_budget(prefect_server: dict[str, str], tmp_path: Path) -> None:
    with SandboxProcess("--rate-limit", "20/2", "--documents", "60", "--api-key", KEY) as sandbox:
        env = {
            **prefect_server,
            "SHIPSYNC_PROJECT_DIR": str(ROOT),
            "SHIPSYNC_API_URL": sandbox.api_url,
            "SHIPSYNC_API_KEY": KEY,
            "SHIPSYNC_RATE_LIMIT": "20/2",
            "SHIPSYNC_WAREHOUSE": str(tmp_path / "w.duckdb"),
            "SHIPSYNC_SPOOL": str(tmp_path / "spool"),
        }
        subprocess.run(
            [sys.executable, "-m", "prefect", "work-pool", "create", "shipsync", "--type", "process"],
            env=env,
            check=True,
            capture_output=True,
            cwd=ROOT,
        )
        deployed = subprocess.run([sys.executable, "-m", "shipsync", "deploy"], env=env, capture_output=True, text=True, cwd=ROOT)
        assert deployed.returncode == 0, deployed.stdout[-2000:] + deployed.stderr[-2000:]
        worker = subprocess.Popen(
            [sys.executable, "-m", "prefect", "worker", "start", "--pool", "shipsync"],
            env=env,
            cwd=tmp_path,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            assert run_deployments(env, [("pull_all/pull-all", {})]) == ["COMPLETED"]
            assert run_deployments(env, [("load_events/load-events", {})]) == ["COMPLETED"]
            con = duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True)
            documents = con.execute("SELECT count(*) FROM documents").fetchone()
            ids = [r[0] for r in con.execute("SELECT id FROM documents ORDER BY id").fetchall()]
            con.close()
            assert documents == (60,)
            before = sandbox.stats()
            started = time.monotonic()
            # Two flow runs at once on one key: 60 documents by id and a forced refresh of 28 metro areas.
            states = run_deployments(
                env,
                [
                    ("pull_documents/pull-documents", {"ids": ids, "all_documents": False}),
                    (
                        "pull_metro_areas/pull-metro-areas",
                        {
                            "force": True,
                            "locodes": LOCODES,
                        },
                    ),
                ],
            )
            elapsed = time.monotonic() - started
            after = sandbox.stats()
        finally:
            worker.terminate()
            worker.wait(timeout=30)
    assert states == ["COMPLETED", "COMPLETED"]
    requests = int(after["admitted"]) - int(before["admitted"])  # type: ignore[call-overload]
    assert requests == 60 + 28 and after["refused_429"] == 0
    # 88 requests at 20 per 2 s take at least 3 full windows beyond the first burst.
    assert elapsed >= 6
    con = duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True)
    runs = con.execute(
        "SELECT flow, status, throttled FROM sync_runs WHERE flow IN ('pull_documents', 'pull_metro_areas') "
        "ORDER BY started_at DESC LIMIT 2"
    ).fetchall()
    con.close()
    assert {r[1] for r in runs} == {"completed"} and {r[2] for r in runs} == {0}
