"""Soak, with real processes: analysts read the lake while every kind of scheduled work writes it.

Two analyst processes open the lake with the statements `shipsync sql --print-attach` prints, on
DuckDB connections of their own: one holds a read-only transaction for the whole test, another
opens, queries and closes every 0.5 s. Meanwhile the sandbox delivers webhooks to a receiver,
`events load` runs every 5 s, and `pull all` and bulk applies run, several at once. Every run must
succeed, no analyst query may fail or wait or see a notification without its resources, the held
transaction keeps its snapshot, and a reader never sees a snapshot older than the last run that had
finished when it opened.
"""

from __future__ import annotations

import json
import os
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
from shipsync_sandbox.serving import free_port
from support.lake import analyst
from support.sandboxes import shipsync_env

SOAK_S = 45.0
ANALYST = str(Path(__file__).parents[1] / "support" / "analyst.py")


class Runs:
    """Every CLI run of the test: its exit code, output, and the lake's newest snapshot when it ended."""

    def __init__(self, env: dict[str, str], warehouse: Path) -> None:
        self.env, self.warehouse = env, warehouse
        self.done: list[dict[str, object]] = []
        self.lock = threading.Lock()

    def run(self, *args: str) -> None:
        started_at = time.time()
        done = subprocess.run([sys.executable, "-m", "shipsync", *args], env=self.env, capture_output=True, text=True, timeout=300)
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


def _observations(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


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
            wait_until_answers(f"http://127.0.0.1:{port}/healthz", receiver, timeout_s=30)
            for mode, interval in (("hold", 1.0), ("poll", 0.5)):
                out = tmp_path / f"{mode}.jsonl"
                process = subprocess.Popen(
                    [sys.executable, ANALYST, mode, str(warehouse), str(out), str(SOAK_S), str(interval)], stdout=subprocess.PIPE, text=True
                )
                assert process.stdout is not None and process.stdout.readline().strip() == "ready"
                analysts.append((process, out))
            started = time.time()

            def deliveries() -> None:
                for seed in range(1, 8):
                    httpx.post(
                        f"{sandbox.url}/_admin/simulate",
                        params={"containers": 4, "seed": seed},
                        headers={"Authorization": "Token sandbox-key-1"},
                        timeout=30,
                    ).raise_for_status()
                    time.sleep(4)

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
            while time.time() - started < SOAK_S - 6:
                # Every 5 s, as the deployment; like Prefect's limit of one, none starts while one runs.
                if loading is None or not loading.is_alive():
                    loading = threading.Thread(target=runs.run, args=("events", "load"))
                    loading.start()
                time.sleep(5)
            if loading is not None:
                loading.join(timeout=120)
            for worker in workers:
                worker.join(timeout=120)
            for process, _ in analysts:
                process.wait(timeout=60)
        finally:
            stop_process(receiver)
            for process, _ in analysts:
                process.kill()
    failed = [r for r in runs.done if r["code"] != 0]
    assert not failed, failed
    loads = [r for r in runs.done if r["args"] == ("events", "load")]
    assert loads  # how many fit in the soak depends on the machine (one took 40 s under CI load)
    # No run waits for another to write: a load ran while another writer ran, and both committed.
    # (How many loads fit in the minute depends on the machine's load, so it is not counted.)
    others = [r for r in runs.done if r["args"][0] in ("pull", "apply")]  # type: ignore[index]
    assert any(
        float(load["started_at"]) < float(other["read_at"]) and float(other["started_at"]) < float(load["read_at"])  # type: ignore[arg-type]
        for load in loads
        for other in others
    ), "no load overlapped another writer"
    held, polled = (_observations(out) for _, out in analysts)
    # Enough observations to mean something; how many fit depends on the machine's load.
    assert len(held) >= 10 and len(polled) >= 10
    errors = [o for o in held + polled if "error" in o]
    assert not errors, errors[:5]
    assert all(o["inconsistent"] == 0 for o in held + polled)  # whole runs, never half of one
    assert len({o["snapshot"] for o in held}) == 1  # the held transaction keeps its snapshot
    assert max(float(o["seconds"]) for o in polled) < 10, "an analyst waited"  # type: ignore[arg-type]
    assert polled[-1]["events"] > 0  # deliveries arrived and were loaded
    for observation in polled:
        finished = [r["snapshot"] for r in runs.done if float(r["read_at"]) < float(observation["opened"])]  # type: ignore[arg-type]
        assert observation["snapshot"] >= max(finished, default=0), observation  # type: ignore[operator]
