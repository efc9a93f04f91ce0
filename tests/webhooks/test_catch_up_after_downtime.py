"""The outage the catch-up is for, end to end: `shipsync up` receives and loads deliveries; up (and
so its receiver) stops while the sandbox delivers, until the sandbox gives up its redeliveries; up
starts again and its catch-up at start puts every notification the service sent into the event log,
each exactly once, with the typed rows its delivery would have made."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx
import orjson
import pytest

from shipsync_bench.processes import UpProcess
from shipsync_sandbox.admin_client import wait_for_deliveries
from support.prefect_up import ROOT, query, up_env
from support.sandboxes import K1, SandboxFactory
from support.waiting import HANG_S, wait_for

pytestmark = pytest.mark.slow


def simulate(sandbox_url: str, containers: int, seed: int) -> None:
    """Journeys of `containers` containers (another seed: other notifications) to the account's webhooks."""
    params = {"containers": containers, "seed": seed}
    answer = httpx.post(f"{sandbox_url}/_admin/simulate", params=params, headers={"Authorization": f"Token {K1}"}, timeout=60)
    answer.raise_for_status()


def test_after_the_receiver_was_down_up_catches_up_every_notification_once(
    make_sandbox: SandboxFactory, secrets_file: Path, tmp_path: Path
) -> None:
    sandbox = make_sandbox(delivery_retry_base_s=0.0)  # the sandbox gives up within seconds, not minutes
    env = up_env(tmp_path, sandbox.api_url, SHIPSYNC_SECRETS_FILE=str(secrets_file), SHIPSYNC_API_KEY=K1)
    warehouse = Path(env["SHIPSYNC_WAREHOUSE"])
    up = UpProcess("--interval", "load-events=15", env=env, cwd=ROOT)
    command = [sys.executable, "-m", "shipsync", "webhooks", "register", "--url", up.receiver_url, "--all-events"]
    registered = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True, timeout=HANG_S, check=False)
    assert registered.returncode == 0, registered.stderr
    account = sandbox.state.world.accounts[K1]
    count = "SELECT count(*), count(DISTINCT notification_id) FROM webhook_events"

    up.start()
    try:
        simulate(sandbox.server.url, 2, seed=1)
        before = wait_for_deliveries(sandbox.server.url, K1)
        assert before["delivered"] > 0 and before["gave_up"] == 0, before
        # Loaded from the spool (the catch-up at start may have listed some of them first: their
        # deliveries take the listed copies' place).
        loaded = "SELECT count(*) FROM webhook_events WHERE received_at IS NOT NULL"
        wait_for(lambda: query(warehouse, loaded)[0][0] >= before["delivered"], "the deliveries in the event log", every_s=2)
        # Stopped whether or not the catch-up this start began has ended: one stopped mid-run gives
        # its one-at-a-time slot back, and the next start's catch-up runs (docs/operations.md, After downtime).
    finally:
        up.stop()

    simulate(sandbox.server.url, 2, seed=2)  # nobody listens: every attempt fails until the sandbox gives up
    during = wait_for_deliveries(sandbox.server.url, K1)
    assert during["gave_up"] > 0 and during["pending"] == 0, during
    sent = sorted(orjson.loads(n.body)["data"]["id"] for n in account.notifications.newest_first())
    assert len(sent) == during["notifications"] > before["notifications"]
    assert query(warehouse, count)[0][0] < len(sent)  # the event log has a gap

    up.start()  # a catch-up at start, since the receiver's last delivery
    try:
        assert "catching up the event log" in up.output
        wait_for(lambda: query(warehouse, count)[0][0] >= len(sent), "the catch-up", timeout_s=600, every_s=2)
        logged = query(warehouse, "SELECT notification_id FROM webhook_events ORDER BY notification_id")
        assert [r[0] for r in logged] == sent  # every notification, each once
        assert query(warehouse, count)[0] == (len(sent), len(sent))
        # The missed ones, known from the listing only, made the typed rows a delivery makes.
        missed = "FROM webhook_events e WHERE e.received_at IS NULL AND e.reference_type = 'transport_event'"
        [(listed,)] = query(warehouse, f"SELECT count(*) {missed}")
        typed = f"SELECT count(*) {missed} AND EXISTS (SELECT 1 FROM transport_events t WHERE t.id = e.reference_id)"
        assert listed > 0 and query(warehouse, typed) == [(listed,)]
        assert query(warehouse, "SELECT count(*) FROM webhook_events WHERE received_at IS NULL") == [(during["gave_up"],)]
        runs = query(warehouse, "SELECT status FROM sync_runs WHERE flow = 'catch_up_events' ORDER BY started_at")
        assert runs and set(runs) == {("completed",)}
    finally:
        up.stop()
