"""Runs a stopped worker left behind, slots nobody holds and runs that keep colliding, on a real
Prefect server (the session's test harness): deployments of the `shipsync` pool with a
one-at-a-time limit (CANCEL_NEW, as prefect.yaml's), runs moved through their states as a worker
moves them, and what `shipsync up` does about those a stop left."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from shipsync.orchestration.api_auth import PrefectApi
from shipsync.orchestration.collisions import BOUND, COLLISION, collisions
from shipsync.orchestration.deployments import PATIENT, POOL, QUEUE, request_patiently
from shipsync.orchestration.stranded_runs import crash_stranded_runs, drop_late_backlog, recover, release_unheld_slots


@pytest.fixture(scope="module")
def prefect(prefect_harness: None) -> Iterator[PrefectApi]:
    """The harness's API, with the `shipsync` pool and its default queue."""
    from prefect.settings import get_current_settings

    api = PrefectApi(str(get_current_settings().api.url))
    answer = request_patiently(api, "POST", "/work_pools/filter", {"work_pools": {"name": {"any_": [POOL]}}})
    if not answer.json():
        request_patiently(api, "POST", "/work_pools/", {"name": POOL, "type": "process"})
    yield api


def post(api: PrefectApi, path: str, body: dict[str, Any]) -> Any:
    return request_patiently(api, "POST", path, body).json()


def one_at_a_time(api: PrefectApi, **more: Any) -> dict[str, Any]:
    """A new deployment of the pool with prefect.yaml's limit: one run at a time, new ones cancelled."""
    name = f"test-{uuid.uuid4().hex[:8]}"
    flow = post(api, "/flows/", {"name": name})
    body = {
        "name": name,
        "flow_id": flow["id"],
        "work_pool_name": POOL,
        "work_queue_name": QUEUE,
        "concurrency_limit": 1,
        "concurrency_options": {"collision_strategy": "CANCEL_NEW"},
        **more,
    }
    post(api, "/deployments/", body)
    [deployment] = post(api, "/deployments/filter", {"deployments": {"name": {"any_": [name]}}})
    return dict(deployment)


def new_run(api: PrefectApi, deployment: dict[str, Any], queue: str = QUEUE) -> str:
    return str(post(api, f"/deployments/{deployment['id']}/create_flow_run", {"work_queue_name": queue})["id"])


def propose(api: PrefectApi, run_id: str, state: str) -> str:
    """Propose a state as a worker does (PENDING takes the deployment's slot); the state the run is in after."""
    post(api, f"/flow_runs/{run_id}/set_state", {"state": {"type": state, "name": state.title()}})
    return state_of(api, run_id)


def state_of(api: PrefectApi, run_id: str) -> str:
    return str(request_patiently(api, "GET", f"/flow_runs/{run_id}", {}).json()["state_type"])


def slots_taken(api: PrefectApi, deployment: dict[str, Any]) -> int:
    name = f"deployment:{deployment['id']}"
    return int(request_patiently(api, "GET", f"/v2/concurrency_limits/{name}", {}).json()["active_slots"])


def take_slot_without_a_run(api: PrefectApi, deployment: dict[str, Any]) -> None:
    """A slot held by no run, as when the server that leased it to a run restarted and forgot the lease."""
    post(api, "/v2/concurrency_limits/increment", {"names": [f"deployment:{deployment['id']}"], "slots": 1, "mode": "concurrency"})


def test_runs_a_stopped_worker_left_are_crashed_and_their_slots_given_back(prefect: PrefectApi) -> None:
    loads, pulls = one_at_a_time(prefect), one_at_a_time(prefect)
    submitting, running = new_run(prefect, loads), new_run(prefect, pulls)
    assert propose(prefect, submitting, "PENDING") == "PENDING"
    assert propose(prefect, running, "PENDING") == "PENDING" and propose(prefect, running, "RUNNING") == "RUNNING"
    # A run of another queue (a worker elsewhere, which still runs) is not up's to crash.
    elsewhere_deployment = one_at_a_time(prefect)
    elsewhere = new_run(prefect, elsewhere_deployment, queue="elsewhere")
    assert propose(prefect, elsewhere, "PENDING") == "PENDING"
    # While they hold the slots, each deployment's next run is cancelled as a collision.
    assert propose(prefect, new_run(prefect, loads), "PENDING") == "CANCELLED"

    crashed = crash_stranded_runs(prefect, "its worker stopped", PATIENT)

    assert {run.id for run in crashed} >= {submitting, running} and elsewhere not in {run.id for run in crashed}
    assert {run.deployment for run in crashed if run.id in (submitting, running)} == {loads["name"], pulls["name"]}
    assert [state_of(prefect, r) for r in (submitting, running, elsewhere)] == ["CRASHED", "CRASHED", "PENDING"]
    assert (slots_taken(prefect, loads), slots_taken(prefect, pulls), slots_taken(prefect, elsewhere_deployment)) == (0, 0, 1)
    assert propose(prefect, new_run(prefect, loads), "PENDING") == "PENDING"  # the next run gets the slot


def test_a_slot_no_run_holds_is_given_back(prefect: PrefectApi) -> None:
    loads, busy = one_at_a_time(prefect), one_at_a_time(prefect)
    take_slot_without_a_run(prefect, loads)
    holder = new_run(prefect, busy, queue="elsewhere")
    assert propose(prefect, holder, "PENDING") == "PENDING"
    assert propose(prefect, new_run(prefect, loads), "PENDING") == "CANCELLED"  # stranded: every run collides

    released = release_unheld_slots(prefect, PATIENT)

    assert released.get(loads["name"]) == 1 and busy["name"] not in released  # a slot a run holds stays held
    assert (slots_taken(prefect, loads), slots_taken(prefect, busy)) == (0, 1)
    assert propose(prefect, new_run(prefect, loads), "PENDING") == "PENDING"


def test_runs_that_came_due_while_nothing_ran_are_dropped_but_the_newest(prefect: PrefectApi) -> None:
    loads = one_at_a_time(prefect, schedules=[{"schedule": {"interval": 60}, "active": True}])
    start = datetime.now(UTC) - timedelta(minutes=10)
    window = {"start_time": start.isoformat(), "end_time": (start + timedelta(minutes=9, seconds=30)).isoformat(), "max_runs": 20}
    post(prefect, f"/deployments/{loads['id']}/schedule", window)
    late = post(prefect, "/flow_runs/filter", {"flow_runs": {"deployment_id": {"any_": [loads["id"]]}}, "sort": "EXPECTED_START_TIME_DESC"})
    assert len(late) >= 5 and all(run["auto_scheduled"] and run["state_type"] == "SCHEDULED" for run in late)
    by_hand = new_run(prefect, loads)  # a run someone asked for is theirs, late or not

    dropped = drop_late_backlog(prefect, PATIENT)

    assert dropped[loads["name"]] == len(late) - 1
    left = post(prefect, "/flow_runs/filter", {"flow_runs": {"deployment_id": {"any_": [loads["id"]]}}})
    assert {run["id"] for run in left} == {late[0]["id"], by_hand}  # the newest scheduled one runs


def test_a_recovery_after_a_restart_does_all_three_and_says_so(prefect: PrefectApi) -> None:
    loads, leaked = one_at_a_time(prefect), one_at_a_time(prefect)
    stranded = new_run(prefect, loads)
    assert propose(prefect, stranded, "PENDING") == "PENDING"
    take_slot_without_a_run(prefect, leaked)

    done = recover(prefect, "left running by a shipsync up that stopped", PATIENT, server_restarted=True)

    said = done.describe() or ""
    assert f"{loads['name']} " in said and "left running by a shipsync up that stopped" in said, said
    assert f"{leaked['name']} 1" in said and "slots no run held" in said, said
    assert state_of(prefect, stranded) == "CRASHED" and slots_taken(prefect, leaked) == 0
    # Without a restart the server still keeps its leases: only the runs are crashed.
    take_slot_without_a_run(prefect, leaked)
    assert recover(prefect, "its worker exited", PATIENT, server_restarted=False).released == {}
    assert slots_taken(prefect, leaked) == 1


def test_runs_cancelled_again_and_again_make_a_deployment_blocked(prefect: PrefectApi) -> None:
    stranded, busy, fine = one_at_a_time(prefect), one_at_a_time(prefect), one_at_a_time(prefect)
    take_slot_without_a_run(prefect, stranded)
    for _ in range(BOUND):
        assert propose(prefect, new_run(prefect, stranded), "PENDING") == "CANCELLED"
    # A deployment whose run has held its slot for a while: runs meanwhile collide, as they should,
    # until fewer than BOUND in a row; a deployment whose runs end well has no collision to show.
    holder = new_run(prefect, busy)
    assert propose(prefect, holder, "PENDING") == "PENDING"
    for _ in range(BOUND - 1):
        assert propose(prefect, new_run(prefect, busy), "PENDING") == "CANCELLED"
    ended = new_run(prefect, fine)
    assert [propose(prefect, ended, state) for state in ("PENDING", "RUNNING", "COMPLETED")][-1] == "COMPLETED"

    found = {c.deployment: c for c in collisions(prefect, PATIENT)}

    assert found[stranded["name"]].in_a_row == BOUND and found[stranded["name"]].blocked
    assert "no run holds its slot" in found[stranded["name"]].describe() and "restart shipsync up" in found[stranded["name"]].describe()
    assert found[busy["name"]].in_a_row == BOUND - 1 and not found[busy["name"]].blocked
    assert found[busy["name"]].holders[0].state == "pending"
    assert fine["name"] not in found
    # One more collision while the same run holds the slot: blocked (the run has outlasted BOUND of them).
    assert propose(prefect, new_run(prefect, busy), "PENDING") == "CANCELLED"
    assert {c.deployment: c for c in collisions(prefect, PATIENT)}[busy["name"]].blocked
    # A run that gets the slot and ends ends the streak.
    release_unheld_slots(prefect, PATIENT)
    again = new_run(prefect, stranded)
    assert [propose(prefect, again, state) for state in ("PENDING", "RUNNING", "COMPLETED")][-1] == "COMPLETED"
    assert stranded["name"] not in {c.deployment for c in collisions(prefect, PATIENT)}
    assert all(run["state"]["message"] == COLLISION for run in _collided(prefect, busy))


def _collided(api: PrefectApi, deployment: dict[str, Any]) -> list[dict[str, Any]]:
    body = {"flow_runs": {"deployment_id": {"any_": [deployment["id"]]}, "state": {"type": {"any_": ["CANCELLED"]}}}}
    found: list[dict[str, Any]] = post(api, "/flow_runs/filter", body)
    return found
