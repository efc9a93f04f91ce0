"""docs/operations.md's "On a Prefect server you already run", run as written: a Prefect server of
the operator's own, `shipsync deploy`, a worker on the pool and the webhook receiver. A deployment
run from Prefect's own command line then pulls into the warehouse."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from shipsync.orchestration.api_auth import PrefectApi
from shipsync.serving import stop_process
from shipsync_bench.processes import SandboxProcess
from shipsync_sandbox.serving import free_port
from support.docs_blocks import docs_block
from support.prefect_up import KEY, ROOT, answers, api, query, up_env, wait_for

pytestmark = pytest.mark.slow

# The lines of the block that run until stopped (the rest run to their end, in order).
LONG_RUNNING = ("prefect server start", "prefect worker start", "shipsync webhooks serve")


@pytest.fixture
def started() -> Iterator[list[subprocess.Popen[bytes]]]:
    processes: list[subprocess.Popen[bytes]] = []
    yield processes
    for process in reversed(processes):
        stop_process(process, 30, group=True)


def test_the_commands_for_a_prefect_server_of_your_own_work_as_shown(tmp_path: Path, started: list[subprocess.Popen[bytes]]) -> None:
    lines = docs_block(ROOT / "docs" / "operations.md", "## On a Prefect server you already run").splitlines()
    assert [line.split()[-1] if "webhooks" not in line else "serve" for line in lines] == ["start", "deploy", "shipsync", "serve"], lines
    port, receiver_port = free_port(), free_port()
    with SandboxProcess("--documents", "5", "--api-key", KEY) as sandbox:
        env = up_env(tmp_path, sandbox.api_url, SHIPSYNC_WEBHOOK_SECRETS="a-webhook-secret-of-the-operator", SHIPSYNC_RATE_LIMIT="0")
        env |= {"PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}", "PREFECT_HOME": str(tmp_path / "prefect")}
        # The server listens where PREFECT_API_URL points its clients.
        env |= {
            "PREFECT_SERVER_API_HOST": "127.0.0.1",
            "PREFECT_SERVER_API_PORT": str(port),
            "PREFECT_API_URL": f"http://127.0.0.1:{port}/api",
        }
        (tmp_path / "warehouse").mkdir(mode=0o700)  # the receiver makes the spool, not its folder
        prefect = PrefectApi(env["PREFECT_API_URL"])
        for number, shown in enumerate(lines):
            line = shown.replace("SHIPSYNC_API_KEY=...", f"SHIPSYNC_API_KEY={KEY}").replace("--port 8701", f"--port {receiver_port}")
            output = tmp_path / f"line-{number}.log"
            with output.open("wb") as log:
                command = ["bash", "-c", line]
                if not any(long_running in line for long_running in LONG_RUNNING):
                    done = subprocess.run(command, env=env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, timeout=600, check=False)
                    assert done.returncode == 0, f"{shown}: {output.read_text()[-3000:]}"
                    continue
                started.append(subprocess.Popen(command, env=env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True))
            if "server start" in line:
                wait_for(lambda: answers(f"{prefect.url}/health"), "the Prefect server")
        assert [process.poll() for process in started] == [None, None, None]
        wait_for(lambda: answers(f"http://127.0.0.1:{receiver_port}/healthz"), "the receiver")
        # A run from Prefect's own command line, taken by the worker the block started.
        run = subprocess.run(
            ["prefect", "deployment", "run", "pull_shipping_lines/pull-shipping-lines", "--watch"],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
        body = {"deployments": {"name": {"any_": ["pull-shipping-lines"]}}, "flow_runs": {"state": {"type": {"any_": ["COMPLETED"]}}}}
        assert api(prefect, "/flow_runs/filter", body)
        assert query(tmp_path / "warehouse", "SELECT count(*) FROM shipping_lines")[0][0] > 0
