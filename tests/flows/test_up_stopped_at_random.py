"""`shipsync up` stopped at random moments, round after round, as operators and crashes stop it:
while its worker submits a `load-events` run, as the run starts, and while it loads and commits;
by SIGTERM (up stops everything) and by SIGKILL (nothing gets to stop). Each time, the next up loads
the webhook deliveries that arrive after it starts within two of load-events' schedule periods: no
run that comes due once it is up is cancelled as a collision while no run of that up holds the
slot. Stops are never timed: a slow stop is waited for, and a stop that hangs is killed."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from shipsync.orchestration.api_auth import PrefectApi
from shipsync.orchestration.collisions import COLLISION
from shipsync.orchestration.state import running_as
from shipsync_bench.processes import UpProcess
from shipsync_sandbox.admin_client import wait_for_deliveries
from support.prefect_up import ROOT, answers, api, query, up_env, wait_for
from support.sandboxes import K1, RunningSandbox, SandboxFactory

pytestmark = pytest.mark.slow

PERIOD_S = 20  # load-events' schedule in this test (prefect.yaml's is a minute)
# Where each round stops up, and how: (moment, signal). The moments are those of a load-events run.
ROUNDS = [
    ("submitting", signal.SIGTERM),
    ("starting", signal.SIGKILL),
    ("loading", signal.SIGTERM),
    ("submitting", signal.SIGKILL),
    ("loading", signal.SIGKILL),
    ("starting", signal.SIGTERM),
]
LOADED = "SELECT count(DISTINCT notification_id) FROM webhook_events WHERE received_at IS NOT NULL"


class Deployment:
    """load-events as up's Prefect API shows it: its runs, and their states' history."""

    def __init__(self, prefect: PrefectApi) -> None:
        self.prefect = prefect
        self.id = next(d["id"] for d in api(prefect, "/deployments/filter", {"limit": 50}) if d["name"] == "load-events")

    def runs(self) -> list[dict[str, Any]]:
        body = {"flow_runs": {"deployment_id": {"any_": [self.id]}}, "sort": "EXPECTED_START_TIME_ASC", "limit": 200}
        found: list[dict[str, Any]] = api(self.prefect, "/flow_runs/filter", body)
        return found

    def held_slot_from(self, run: dict[str, Any]) -> datetime | None:
        """When `run` took the deployment's slot (became PENDING), if it ever did."""
        answer = httpx.get(
            f"{self.prefect.url}/flow_run_states/", params={"flow_run_id": run["id"]}, headers=self.prefect.headers, timeout=30
        )
        answer.raise_for_status()
        pending = [_moment(state["timestamp"]) for state in answer.json() if state["type"] == "PENDING"]
        return min(pending) if pending else None


def _moment(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text) if text else None


def is_collision(run: dict[str, Any]) -> bool:
    return run["state_type"] == "CANCELLED" and (run.get("state") or {}).get("message") == COLLISION


def stranded_collisions(deployment: Deployment, started: datetime, ready: datetime) -> list[str]:
    """Runs due once this up was ready and cancelled as collisions while no run of this up (one that
    took the slot after `started`) held the slot: the fault a stranded slot makes. A collision
    while another run of this up runs is the schedule's own overlap; a run from before this up that
    still holds the slot is stranded. Runs that came due while up was down or starting are the
    backlog the server cancels before up has ended what the last up left."""
    runs = deployment.runs()
    holders = []
    for run in runs:
        if not is_collision(run) and (took := deployment.held_slot_from(run)) is not None and took >= started:
            holders.append((took, _moment(run.get("end_time"))))
    stranded = []
    for run in runs:
        cancelled, due = _moment(run.get("end_time")), _moment(run.get("expected_start_time"))
        if not is_collision(run) or cancelled is None or due is None or due < ready:
            continue
        # A second's slack: each state's time is taken where it is proposed, on this host's clock.
        if not any(took <= cancelled + timedelta(seconds=1) and (ended is None or ended >= cancelled) for took, ended in holders):
            stranded.append(f"{run['name']} (cancelled {cancelled:%H:%M:%S})")
    return stranded


def wait_until_loaded(up: UpProcess, deployment: Deployment, warehouse: Path, delivered: int, started: datetime, ready: datetime) -> None:
    """Until the `delivered` notifications so far are in the event log; failing at once on a stranded collision."""

    def loaded() -> bool:
        stranded = stranded_collisions(deployment, started, ready)
        assert not stranded, f"load-events runs cancelled while no run held the slot: {stranded}\n{up.output[-3000:]}"
        return bool(query(warehouse, LOADED)[0][0] >= delivered)

    wait_for(loaded, f"{delivered} deliveries in the event log", timeout_s=900, every_s=2)


def runs_until_loaded(deployment: Deployment, warehouse: Path, spooled: datetime) -> list[str]:
    """The load-events runs that came due after `spooled` up to the first run that started after it
    and completed (it read a spool that held the deliveries), without those cancelled as
    collisions (the schedule's own overlap: `stranded_collisions` checks them)."""
    [(loader,)] = wait_for(
        lambda: query(
            warehouse,
            "SELECT prefect_flow_run_id FROM sync_runs WHERE flow = 'load_events' AND status = 'completed' AND started_at >= "
            f"'{spooled.isoformat()}'::TIMESTAMPTZ ORDER BY started_at LIMIT 1",
        ),
        "a load-events run started after the deliveries were spooled",
        timeout_s=900,
        every_s=2,
    )
    runs = deployment.runs()
    due_by = next(_moment(r["expected_start_time"]) for r in runs if r["id"] == loader)
    assert due_by is not None
    return [
        f"{r['name']} ({r['state_type']})"
        for r in runs
        if not is_collision(r) and spooled < (_moment(r["expected_start_time"]) or spooled) <= due_by
    ]


def simulate(sandbox: RunningSandbox, containers: int, seed: int) -> int:
    """Journeys of `containers` containers to the account's webhook; once every delivery is
    answered, how many notifications the account has been sent (each id once: a later journey may
    send an id again)."""
    params = {"containers": containers, "seed": seed}
    answer = httpx.post(f"{sandbox.server.url}/_admin/simulate", params=params, headers={"Authorization": f"Token {K1}"}, timeout=60)
    answer.raise_for_status()
    stats = wait_for_deliveries(sandbox.server.url, K1, timeout_s=600)
    assert stats["pending"] == 0 and stats["gave_up"] == 0, stats
    return len(sandbox.state.world.accounts[K1].notifications)


def wait_for_moment(deployment: Deployment, moment: str, after: set[str], rng: random.Random) -> str:
    """Wait for the next load-events run (one that was only scheduled when `after` was taken) to
    reach `moment`; what was reached.

    submitting: PENDING (the worker has taken the slot and starts the run's process); starting:
    RUNNING (the flow begins); loading: RUNNING and a random while more (reading the spool,
    writing the event log, committing)."""
    wanted = "PENDING" if moment == "submitting" else "RUNNING"
    deadline = time.monotonic() + 10 * PERIOD_S
    while time.monotonic() < deadline:
        for run in deployment.runs():
            if run["id"] not in after and run["state_type"] in (wanted, "RUNNING"):
                if moment == "loading":
                    time.sleep(rng.uniform(0.0, 3.0))
                return f"{moment} ({run['name']} {run['state_type'].lower()})"
        time.sleep(0.05)
    return f"{moment} (not reached within {10 * PERIOD_S} s: stopped anyway)"


def stop(up: UpProcess, signum: int) -> str:
    """Stop up with `signum`; once its processes are gone (a slow stop is waited for), how it went."""
    assert up.process is not None
    children = {name: (c["pid"], c["command"]) for name, c in _children(up).items() if c.get("pid")}
    if signum == signal.SIGTERM:
        seconds = up.stop(timeout_s=300)  # killed (None) only if it hangs well past its own grace periods
        how = f"SIGTERM, stopped in {seconds:.1f} s" if seconds is not None else "SIGTERM, killed after 300 s"
    else:
        os.kill(up.process.pid, signal.SIGKILL)
        up.process.wait()
        how = "SIGKILL"
    # Its processes stop with it (a worker on a busy machine can take well over 30 s): the next up
    # needs their ports.
    alive = lambda: [name for name, (pid, command) in children.items() if running_as(pid, command)]  # noqa: E731
    wait_for(lambda: not alive(), f"up's processes to stop ({alive()})")
    return how


def _children(up: UpProcess) -> dict[str, dict[str, Any]]:
    import json

    state: dict[str, Any] = json.loads((up.state_dir / "up.json").read_text())
    return dict(state["children"])


def test_up_stopped_at_random_moments_loads_deliveries_within_two_periods_each_time(
    make_sandbox: SandboxFactory, secrets_file: Path, tmp_path: Path
) -> None:
    rng = random.Random(os.environ.get("SHIPSYNC_TEST_SEED", "stopped-at-random"))
    sandbox = make_sandbox(documents=5)
    env = up_env(tmp_path, sandbox.api_url, SHIPSYNC_SECRETS_FILE=str(secrets_file), SHIPSYNC_API_KEY=K1)
    warehouse = Path(env["SHIPSYNC_WAREHOUSE"])
    up = UpProcess("--interval", f"load-events={PERIOD_S}", env=env, cwd=ROOT)
    command = [sys.executable, "-m", "shipsync", "webhooks", "register", "--url", up.receiver_url, "--all-events"]
    registered = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert registered.returncode == 0, registered.stderr
    health = up.receiver_url.replace("/webhook", "/healthz")
    seen: list[str] = []
    try:
        for number, (moment, signum) in enumerate([*ROUNDS, ("end", 0)]):
            started = datetime.now(UTC)  # before its worker takes any run
            up.start()
            ready = datetime.now(UTC)
            deployment = Deployment(up.prefect_api)
            wait_for(lambda: answers(health), "the receiver to start")
            # Deliveries after this start: in the event log within two schedule periods.
            spooled_from = datetime.now(UTC)
            delivered = simulate(sandbox, 1, seed=number)
            wait_until_loaded(up, deployment, warehouse, delivered, started, ready)
            due = runs_until_loaded(deployment, warehouse, spooled_from)
            assert len(due) <= 2, f"round {number}: loaded only after {due}\n{up.output[-3000:]}"
            if moment == "end":
                break
            # Deliveries the next run loads, and a stop at a moment of that run.
            before = {run["id"] for run in deployment.runs() if run["state_type"] != "SCHEDULED"}
            simulate(sandbox, 1, seed=1000 + number)
            reached = wait_for_moment(deployment, moment, before, rng)
            seen.append(f"round {number}: {reached}, {stop(up, signum)}")
        # Each notification once; no deployment left blocked.
        [(rows, distinct)] = query(warehouse, "SELECT count(*), count(DISTINCT notification_id) FROM webhook_events")
        assert rows == distinct
        status = subprocess.run(
            [sys.executable, "-m", "shipsync", "status"], env=env, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False
        )
        assert status.returncode == 0 and "error:" not in status.stdout, status.stdout + status.stderr
    finally:
        up.stop(timeout_s=300)
        print("\n".join(seen))
