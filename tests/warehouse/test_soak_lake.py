"""Soak, with real processes: analysts read the lake while every kind of scheduled work writes it.

Two analyst processes open the lake with the statements `shipsync sql --print-attach` prints, on
DuckDB connections of their own: one holds a read-only transaction for the whole test, another
opens, queries and closes every 0.5 s. Meanwhile the sandbox delivers webhooks to a receiver,
`events load` runs every 5 s, and `pull all` and bulk applies run, several at once. Every run must
succeed, no analyst query may fail or wait or see a notification without its resources, the held
transaction keeps its snapshot, and a reader never sees a snapshot older than the last run that had
finished when it opened.

The soak lasts as long as its work, not a period: a busy machine fits fewer runs in a minute, so
the test waits for the work to be done and for the analysts' observations, each within a bound
that only a hung process reaches.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from shipsync.serving import stop_process, wait_until_answers
from shipsync_bench.processes import SandboxProcess
from shipsync_demo.run import example_files
from shipsync_sandbox.admin_client import wait_for_deliveries
from shipsync_sandbox.serving import free_port
from support.analyst import observations, stop_file, wait_for_observations
from support.lake import analyst
from support.sandboxes import shipsync_env

SOAK_HANG_S = 1200.0  # what only a hung run reaches: the soak takes about a minute on an idle machine
ANALYST = str(Path(__file__).parents[1] / "support" / "analyst.py")


class Runs:
    """Every CLI run of the test: its exit code, output, and the lake's newest snapshot when it ended."""

    def __init__(self, env: dict[str, str], warehouse: Path) -> None:
        self.env, self.warehouse = env, warehouse
        self.done: list[dict[str, object]] = []
        self.lock = threading.Lock()

    def run(self, *args: str) -> None:
        started_at = time.time()
        done = subprocess.run([sys.executable, "-m", "shipsync", *args], env=self.env, capture_output=True, text=True, timeout=SOAK_HANG_S)
        with analyst(self.warehouse) as con:
            snapshot = con.execute("SELECT id FROM ducklake_current_snapshot(current_database())").fetchone()
        with self.lock:
            self.done.append(
                {
                    "args": args,
                    "code": done.returncode,
                    "out": done.stdout + done.stderr,
                    "started_at": started_at,
                    "read_at": time.time(),
                    "snapshot": snapshot[0] if snapshot else None,
                }
            )


@pytest.mark.slow
def test_analysts_and_scheduled_runs_never_block_each_other(tmp_path: Path) -> None:
    warehouse = tmp_path / "warehouse"
    sheets = example_files(tmp_path)
    with SandboxProcess("--rate-limit", "0", "--documents", "60") as sandbox:
        env = {**os.environ, **shipsync_env(sandbox.api_url, warehouse, "sandbox-key-1"), "PREFECT_SERVER_ANALYTICS_ENABLED": "false"}
        runs = Runs(env, warehouse)
        port = free_port()
        runs.run("pull", "all")
        runs.run("webhooks", "register", "--url", f"http://127.0.0.1:{port}/webhook", "--all-events")
        receiver = subprocess.Popen(
            [sys.executable, "-m", "shipsync", "webhooks", "serve", "--port", str(port)], env=env, stdout=subprocess.DEVNULL
        )
        analysts = []
        try:
            wait_until_answers(f"http://127.0.0.1:{port}/healthz", receiver, timeout_s=SOAK_HANG_S)
            for mode, interval in (("hold", 1.0), ("poll", 0.5)):
                out = tmp_path / f"{mode}.jsonl"
                command = [sys.executable, ANALYST, mode, str(warehouse), str(out), str(SOAK_HANG_S), str(interval)]
                process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
                assert process.stdout is not None and process.stdout.readline().strip() == "ready"
                analysts.append((process, out))

            def deliveries() -> None:
                for seed in range(1, 8):
                    httpx.post(
                        f"{sandbox.url}/_admin/simulate",
                        params={"containers": 4, "seed": seed},
                        headers={"Authorization": "Token sandbox-key-1"},
                        timeout=300,
                    ).raise_for_status()
                    time.sleep(4)
                wait_for_deliveries(sandbox.url, "sandbox-key-1", timeout_s=SOAK_HANG_S)

            def other_work() -> None:
                time.sleep(8)
                runs.run("pull", "all", "--force")
                runs.run("apply", "custom-field-definitions", str(sheets / "custom-field-definitions.csv"))
                runs.run("apply", "custom-fields", str(sheets / "container-tags.csv"))

            def at_the_same_time() -> None:  # writers side by side: each commits, or replays and commits
                time.sleep(10)
                runs.run("pull", "tracking-requests")
                runs.run("pull", "all")

            workers = [threading.Thread(target=w) for w in (deliveries, other_work, at_the_same_time)]
            for worker in workers:
                worker.start()
            loading: threading.Thread | None = None
            while any(worker.is_alive() for worker in workers):
                # Every 5 s, as the deployment; like Prefect's limit of one, none starts while one runs.
                if loading is None or not loading.is_alive():
                    loading = threading.Thread(target=runs.run, args=("events", "load"))
                    loading.start()
                time.sleep(5)
            if loading is not None:
                loading.join()
            runs.run("events", "load")  # the last one, after every delivery was acknowledged
            last_run_read_at = float(runs.done[-1]["read_at"])  # type: ignore[arg-type]
            # Enough observations to mean something, and the poller's last one after the last run.
            (holder, held_out), (poller, polled_out) = analysts
            wait_for_observations(held_out, holder, at_least=10)
            wait_for_observations(polled_out, poller, at_least=10)
            wait_for_observations(polled_out, poller, at_least=1, after=last_run_read_at)
            for process, out in analysts:
                stop_file(out).touch()
                process.wait(timeout=SOAK_HANG_S)
        finally:
            stop_process(receiver)
            for process, _ in analysts:
                process.kill()
    failed = [r for r in runs.done if r["code"] != 0]
    assert not failed, failed
    loads = [r for r in runs.done if r["args"] == ("events", "load")]
    # No run waits for another to write: a load ran while another writer ran, and both committed.
    others = [r for r in runs.done if r["args"][0] in ("pull", "apply")]  # type: ignore[index]
    assert any(
        float(load["started_at"]) < float(other["read_at"]) and float(other["started_at"]) < float(load["read_at"])  # type: ignore[arg-type]
        for load in loads
        for other in others
    ), "no load overlapped another writer"
    held, polled = (observations(out) for _, out in analysts)
    errors = [o for o in held + polled if "error" in o]
    assert not errors, errors[:5]
    assert all(o["inconsistent"] == 0 for o in held + polled)  # whole runs, never half of one
    assert len({o["snapshot"] for o in held}) == 1  # the held transaction keeps its snapshot
    # An analyst never waits for a writer: no query took ten times the analyst's usual on this
    # machine now (and at least 10 s, as on an idle one), where waiting for a run would.
    took = sorted(float(o["seconds"]) for o in polled)  # type: ignore[arg-type]
    assert took[-1] < max(10.0, 10 * statistics.median(took)), f"an analyst waited: {took[-5:]}"
    assert polled[-1]["events"] > 0  # deliveries arrived and were loaded
    for observation in polled:
        finished = [r["snapshot"] for r in runs.done if float(r["read_at"]) < float(observation["opened"])]  # type: ignore[arg-type]
        assert observation["snapshot"] >= max(finished, default=0), observation  # type: ignore[operator]
