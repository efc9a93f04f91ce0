"""Durability of the event log: kill -9 of the receiver mid-burst, kill -9 of `events load`, and
deliveries in any order ending in the same state."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from shipsync.serving import wait_until_answers
from shipsync.webhooks.framing import encode_record, read_records
from shipsync.webhooks.load import load_events
from shipsync.webhooks.signature import sign
from shipsync.webhooks.spool import is_finished, segments
from shipsync_sandbox.deliver import envelope
from shipsync_sandbox.journeys import simulate
from shipsync_sandbox.seed import AccountSize, build_world
from shipsync_sandbox.serving import free_port
from shipsync_sandbox.timeline import REFERENCE_START
from support.http import HTTP
from support.lake import fetch, location
from support.waiting import HANG_S

SECRET = "whsec-durability-0001"
KILLS = 20


def journey_notifications(containers: int, seed: int = 1) -> list[bytes]:
    """Real-shaped notifications from the sandbox's journeys."""
    world = build_world(["k"], start=REFERENCE_START, seed=seed, size=AccountSize(documents=max(40, containers)))
    bodies: list[bytes] = []

    def emit(account: Any, event: str, reference: dict[str, Any], included: list[dict[str, Any]], created_at: str) -> None:
        bodies.append(orjson.dumps(envelope("webhook-1", event, reference, [reference, *included], created_at)))

    simulate(world.accounts["k"], emit, containers=containers, seed=seed)
    return bodies


def start_receiver(port: int, spool: Path, warehouse: Path) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "SHIPSYNC_WAREHOUSE": str(warehouse),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "SHIPSYNC_WEBHOOK_SECRETS": SECRET,
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "shipsync", "webhooks", "serve", "--port", str(port), "--spool", str(spool)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_until_answers(f"http://127.0.0.1:{port}/healthz", process, timeout_s=HANG_S)
    return process


@pytest.mark.slow
def test_kill_9_of_the_receiver_loses_no_acknowledged_delivery(tmp_path: Path) -> None:
    bodies = journey_notifications(400)
    port, spool, warehouse = free_port(), tmp_path / "spool", tmp_path / "w"
    acknowledged: set[str] = set()
    lock = threading.Lock()
    queue = list(enumerate(bodies))
    done = threading.Event()

    def sender() -> None:
        # Like the service: retry each delivery until it is answered 2xx.
        with httpx.Client(timeout=2) as client:
            while True:
                with lock:
                    if not queue:
                        return
                    _, body = queue.pop()
                while True:
                    try:
                        response = client.post(
                            f"http://127.0.0.1:{port}/webhook", content=body, headers={"X-T49-Webhook-Signature": sign(SECRET, body)}
                        )
                        if response.status_code == 200:
                            with lock:
                                acknowledged.add(orjson.loads(body)["data"]["id"])
                            time.sleep(0.005)  # a steady stream, so that the kills land mid-burst
                            break
                    except httpx.HTTPError:
                        pass
                    time.sleep(0.02)

    receiver = start_receiver(port, spool, warehouse)
    threads = [threading.Thread(target=sender) for _ in range(8)]
    for thread in threads:
        thread.start()
    rng = random.Random(7)
    kills = 0
    while any(t.is_alive() for t in threads) and kills < KILLS:
        time.sleep(rng.uniform(0.05, 0.5))  # a random moment of the burst
        receiver.send_signal(signal.SIGKILL)
        receiver.wait()
        kills += 1
        receiver = start_receiver(port, spool, warehouse)
    for thread in threads:
        thread.join(timeout=HANG_S)
    done.set()
    receiver.send_signal(signal.SIGKILL)
    receiver.wait()
    assert kills == KILLS and len(acknowledged) == len(bodies)
    report = load_events(location(warehouse), spool)
    rows = fetch(warehouse, "SELECT count(*), count(DISTINCT notification_id) FROM webhook_events")[0]
    assert rows == (len(bodies), len(bodies))
    loaded = {r[0] for r in fetch(warehouse, "SELECT notification_id FROM webhook_events")}
    assert acknowledged <= loaded
    assert report.loaded == len(bodies)


def write_spool(spool: Path, bodies: list[bytes], per_segment: int) -> None:
    spool.mkdir(parents=True, exist_ok=True)
    for n in range(0, len(bodies), per_segment):
        with (spool / f"segment-{n:020d}-1.spool").open("wb") as out:
            out.write(b"".join(encode_record(b, 0) for b in bodies[n : n + per_segment]))


@pytest.mark.slow
def test_kill_9_during_events_load_then_rerun_loads_each_once(tmp_path: Path) -> None:
    # About 10,000 full-record notifications: their load takes 10 s or more here (24 s at load 6),
    # so both kills land mid-load, before and after the first commits.
    bodies = journey_notifications(40)
    bodies = bodies + [
        orjson.dumps({**orjson.loads(b), "data": {**orjson.loads(b)["data"], "id": f"copy-{i}"}}) for i, b in enumerate(bodies * 10)
    ]
    spool, warehouse = tmp_path / "spool", tmp_path / "w"
    write_spool(spool, bodies, 15_000)
    script = (
        "from shipsync.webhooks.load import load_events; from pathlib import Path; "
        f"load_events(Path({str(warehouse)!r}), Path({str(spool)!r}))"
    )
    for delay in (1.5, 3.0):
        process = subprocess.Popen([sys.executable, "-c", script])
        time.sleep(delay)
        process.send_signal(signal.SIGKILL)
        process.wait()
        if warehouse.exists():
            fetch(warehouse, "SELECT count(*) FROM webhook_events")  # the file opens after a kill
    load_events(location(warehouse), spool)
    rows = fetch(warehouse, "SELECT count(*), count(DISTINCT notification_id) FROM webhook_events")[0]
    assert rows == (len(bodies), len(bodies))
    assert load_events(location(warehouse), spool).loaded == 0


@pytest.mark.slow
def test_shuffled_orders_end_in_the_same_state(tmp_path: Path) -> None:
    bodies = journey_notifications(4)
    states = []
    for seed in (1, 2, 3):
        order = bodies[:]
        random.Random(seed).shuffle(order)
        spool, warehouse = tmp_path / f"spool{seed}", tmp_path / f"w{seed}"
        write_spool(spool, order, 17)
        load_events(location(warehouse), spool)
        states.append(
            (
                fetch(warehouse, "SELECT id, current_status, observed_at, last_event_id FROM containers ORDER BY id"),
                fetch(warehouse, "SELECT * EXCLUDE (_synced_at, _run_id, first_seen_at, last_changed_at) FROM shipments ORDER BY id"),
                fetch(warehouse, "SELECT notification_id FROM webhook_events ORDER BY 1"),
                fetch(warehouse, "SELECT container_number, event, event_at FROM container_milestones ORDER BY 1, 3, 2"),
            )
        )
    assert states[0] == states[1] == states[2]
    # The newest event won, whatever the order: each box as its last notification carried it.
    newest: dict[str, tuple[str, str]] = {}
    for body in map(orjson.loads, bodies):
        at = body["data"]["attributes"]["created_at"]
        for box in (r for r in body["included"] if r["type"] == "container"):
            if box["id"] not in newest or newest[box["id"]][0] <= at:
                newest[box["id"]] = (at, box["attributes"]["current_status"])
    assert {(id_, status) for id_, status, _, _ in states[0][0]} == {(id_, status) for id_, (_, status) in newest.items()}


@pytest.mark.slow
def test_sigterm_stops_the_receiver_cleanly(tmp_path: Path) -> None:
    port, spool, warehouse = free_port(), tmp_path / "spool", tmp_path / "w"
    receiver = start_receiver(port, spool, warehouse)
    body = journey_notifications(1)[0]
    response = HTTP.post(f"http://127.0.0.1:{port}/webhook", content=body, headers={"X-T49-Webhook-Signature": sign(SECRET, body)})
    assert response.status_code == 200
    receiver.send_signal(signal.SIGTERM)
    assert receiver.wait(timeout=HANG_S) == 128 + signal.SIGTERM
    (segment,) = segments(spool)
    records = list(read_records(segment))
    # The segment is cut to its last record and released: the next load archives it.
    assert [r.body for r in records] == [body] and segment.stat().st_size == records[-1].end_offset
    assert is_finished(segment)
    report = load_events(location(warehouse), spool)
    assert report.loaded == 1 and report.archived == [segment.name]
