"""Flow runs that a stopped worker left behind, and the one-at-a-time slots they hold.

A deployment with a concurrency limit (prefect.yaml's `one_at_a_time`) takes a slot of its
limit when a run becomes PENDING and gives it back when the run ends. A worker stopped or killed
mid-run never reports the end: its run stays PENDING or RUNNING and keeps the slot. Prefect keeps
the slot's lease in the server's memory, so after the server restarts nothing ever expires it, and
every later run of that deployment is cancelled as a collision (CANCEL_NEW). Upstream:
https://github.com/PrefectHQ/prefect/issues/17415 (orphaned concurrency slots).

Only up's worker takes runs from up's queue, so when that worker is not running (up starts or
stops, or the worker exited), every run on the queue still PENDING, RUNNING or CANCELLING is
stranded: `crash_stranded_runs` marks each CRASHED through Prefect's state API, which gives its
slot back. `release_unheld_slots` then gives back what no active run holds (a slot whose lease the
server forgot); it is for when the server's leases are gone too (a new server), since a lease
the server still keeps is given back when it expires.

Scheduled runs that came due while no worker ran would all be submitted at once when one starts
again, and all but one cancelled as collisions: `drop_late_backlog` deletes those of deployments
with a concurrency limit but the newest of each, which runs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from shipsync.orchestration.api_auth import PrefectApi
from shipsync.orchestration.deployments import POOL, QUEUE, Patience, deployments, request_patiently
from shipsync.orchestration.state import stop_group

# The states in which a run holds its deployment's slot (Prefect gives it back on any other).
HOLDING = ("PENDING", "RUNNING", "CANCELLING")


@dataclass(frozen=True)
class StrandedRun:
    id: str
    name: str
    deployment: str
    state: str


@dataclass(frozen=True)
class Recovery:
    """What `recover` did: the runs it marked crashed (and why), the slots it gave back and the late
    scheduled runs it dropped, by deployment."""

    reason: str
    crashed: list[StrandedRun]
    released: dict[str, int]
    dropped: dict[str, int] = field(default_factory=dict)

    def describe(self) -> str | None:
        """One line for the operator, or None when there was nothing to do."""
        parts = []
        if self.crashed:
            runs = ", ".join(f"{run.deployment} {run.name} ({run.state.lower()})" for run in self.crashed)
            parts.append(f"marked {len(self.crashed)} flow run(s) crashed, {self.reason}: {runs}")
        if self.released:
            parts.append(f"gave back one-at-a-time slots no run held: {_by_deployment(self.released)}")
        if self.dropped:
            parts.append(f"dropped scheduled runs that came due while nothing ran, but the newest of each: {_by_deployment(self.dropped)}")
        return "; ".join(parts) or None


def _by_deployment(counts: dict[str, int]) -> str:
    return ", ".join(f"{name} {count}" for name, count in sorted(counts.items()))


def active_runs(api: PrefectApi, patience: Patience, *, queue: str | None = None) -> list[dict[str, Any]]:
    """The pool's runs in a state that holds a slot (on `queue` only, if given)."""
    body: dict[str, Any] = {"flow_runs": {"state": {"type": {"any_": list(HOLDING)}}}, "work_pools": {"name": {"any_": [POOL]}}}
    if queue is not None:
        body["work_pool_queues"] = {"name": {"any_": [queue]}}
    body["limit"] = 200
    found: list[dict[str, Any]] = request_patiently(api, "POST", "/flow_runs/filter", body, patience).json()
    return found


def crash_stranded_runs(api: PrefectApi, reason: str, patience: Patience) -> list[StrandedRun]:
    """Mark CRASHED every run on up's queue that holds a slot: call only while up's worker is not
    running. A run's process that outlived its worker is stopped first, so that nothing runs on
    under a run marked crashed. Forced, as Prefect's own clients report a crash; the server gives
    back the run's slot."""
    names = {d["id"]: str(d["name"]) for d in deployments(api, patience)}
    crashed = []
    for run in active_runs(api, patience, queue=QUEUE):
        stop_run_process(run.get("infrastructure_pid"))
        state = {"type": "CRASHED", "name": "Crashed", "message": reason}
        request_patiently(api, "POST", f"/flow_runs/{run['id']}/set_state", {"state": state, "force": True}, patience)
        crashed.append(StrandedRun(str(run["id"]), str(run["name"]), names.get(run["deployment_id"], "?"), str(run["state_type"])))
    return crashed


def stop_run_process(infrastructure_pid: str | None, grace_s: float = 3.0) -> bool:
    """Stop the process group of a flow run started by up's worker (its `infrastructure_pid`, a
    process of this host: up's worker is), if it still runs a Prefect engine; whether it did."""
    if not infrastructure_pid or not infrastructure_pid.isdigit():
        return False
    pid = int(infrastructure_pid)
    if not _runs_a_flow(pid):
        return False
    stop_group(pid, lambda: _runs_a_flow(pid), grace_s)
    return True


def _runs_a_flow(pid: int) -> bool:
    """Whether `pid` is alive, leads its process group and runs Prefect's engine (a process worker's
    flow run), not another process that reused the pid."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        leads = os.getpgid(pid) == pid
    except (OSError, ProcessLookupError):
        return False
    return leads and any(part.startswith((b"prefect.engine", b"prefect.runner")) for part in cmdline)


def release_unheld_slots(api: PrefectApi, patience: Patience) -> dict[str, int]:
    """Give back the slots of each deployment's limit beyond the runs that hold one; what was given
    back, by deployment. Only right when the server keeps no lease of its own for them (see the
    module's docstring)."""
    # Slots first, holders second: a run that takes a slot in between is counted as a holder of a
    # slot not yet seen (nothing given back), and one that ends in between has given its slot back
    # already (Prefect never takes a limit below zero).
    pool = deployments(api, patience)
    holding: dict[str, int] = {}
    for run in active_runs(api, patience):
        holding[run["deployment_id"]] = holding.get(run["deployment_id"], 0) + 1
    released = {}
    for deployment in pool:
        limit = deployment.get("global_concurrency_limit") or {}
        extra = int(limit.get("active_slots") or 0) - holding.get(deployment["id"], 0)
        if limit.get("name") and extra > 0:
            request_patiently(api, "POST", "/v2/concurrency_limits/decrement", {"names": [limit["name"]], "slots": extra}, patience)
            released[str(deployment["name"])] = extra
    return released


def drop_late_backlog(api: PrefectApi, patience: Patience) -> dict[str, int]:
    """Delete the auto-scheduled runs on up's queue that are due already, but the newest of each
    deployment with a concurrency limit: what was deleted, by deployment. Call before up's worker
    starts (it would submit them all at once, and all but one would collide)."""
    limited = {d["id"]: str(d["name"]) for d in deployments(api, patience) if d.get("global_concurrency_limit")}
    body = {
        "flow_runs": {"state": {"type": {"any_": ["SCHEDULED"]}}, "expected_start_time": {"before_": _now_iso()}},
        "work_pools": {"name": {"any_": [POOL]}},
        "work_pool_queues": {"name": {"any_": [QUEUE]}},
        "sort": "EXPECTED_START_TIME_DESC",
        "limit": 200,
    }
    kept: set[str] = set()
    dropped: dict[str, int] = {}
    for run in request_patiently(api, "POST", "/flow_runs/filter", body, patience).json():
        deployment = run.get("deployment_id")
        if deployment not in limited or not run.get("auto_scheduled"):
            continue
        if deployment not in kept:
            kept.add(deployment)  # the newest: it runs
            continue
        request_patiently(api, "DELETE", f"/flow_runs/{run['id']}", {}, patience)
        dropped[limited[deployment]] = dropped.get(limited[deployment], 0) + 1
    return dropped


def _now_iso() -> str:
    return datetime.now(UTC).isoformat()


def recover(api: PrefectApi, reason: str, patience: Patience, *, server_restarted: bool) -> Recovery:
    """The stranded runs on up's queue marked crashed; with `server_restarted` (the server's leases
    are gone, and its worker is not started yet), every slot no active run holds given back and
    the late scheduled runs dropped too."""
    crashed = crash_stranded_runs(api, reason, patience)
    if not server_restarted:
        return Recovery(reason, crashed, {})
    return Recovery(reason, crashed, release_unheld_slots(api, patience), drop_late_backlog(api, patience))
