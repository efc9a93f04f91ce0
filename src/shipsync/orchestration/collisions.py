"""Runs of a deployment cancelled again and again because its one-at-a-time slot is taken.

prefect.yaml gives most deployments a concurrency limit of 1 with CANCEL_NEW: a run that finds the
slot taken is cancelled as a collision. That is right while another run of the deployment runs,
and wrong when the slot is held for good (a stranded run, a slot whose lease the server forgot):
then every run is cancelled and the deployment never runs again. `collisions` finds deployments
whose newest ended runs are such cancellations. A deployment is *blocked* when `BOUND` of them in
a row all found the slot held by nobody, or by runs that already held it before the first of
them: `shipsync status` shows it and fails, and `shipsync up` says it in its output.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from shipsync.orchestration.api_auth import PrefectApi
from shipsync.orchestration.deployments import Patience, deployments, request_patiently
from shipsync.orchestration.stranded_runs import active_runs

# The message of the CANCELLED state Prefect's server gives a run that collides (CANCEL_NEW).
COLLISION = "Deployment concurrency limit reached."
# Runs in a row cancelled as collisions that make a deployment blocked: a run that outlasts a few
# of its deployment's periods is rare, a slot held for good cancels every run.
BOUND = 5
ENDED = ("COMPLETED", "FAILED", "CRASHED", "CANCELLED")


@dataclass(frozen=True)
class Holder:
    """A run that holds a deployment's slot: its name, state and since when (ISO 8601)."""

    name: str
    state: str
    since: str


@dataclass(frozen=True)
class Collisions:
    """A deployment whose newest ended runs were cancelled as collisions: how many in a row, when the
    first of them ended, and the runs that hold its slot now (none: a slot no run holds)."""

    deployment: str
    in_a_row: int
    since: str
    holders: list[Holder] = field(default_factory=list)

    @property
    def blocked(self) -> bool:
        if self.in_a_row < BOUND:
            return False
        first = _moment(self.since)
        return all(_moment(holder.since) <= first for holder in self.holders)

    def describe(self) -> str:
        if self.holders:
            held = "its slot is held by " + ", ".join(f"{h.name} ({h.state}, since {_clock(h.since)} UTC)" for h in self.holders)
        else:
            held = "no run holds its slot"
        runs = "its last run was" if self.in_a_row == 1 else f"its last {self.in_a_row} runs were"
        text = f"{self.deployment}: {runs} cancelled as collisions (since {_clock(self.since)} UTC); {held}"
        if self.blocked:
            text += "; restart shipsync up to mark stranded runs crashed and give their slots back"
        return text


def _moment(iso: str) -> datetime:
    return datetime.fromisoformat(iso) if iso else datetime.min.replace(tzinfo=UTC)


def _clock(iso: str) -> str:
    return iso[:19].replace("T", " ")


def _is_collision(run: dict[str, Any]) -> bool:
    state = run.get("state") or {}
    return run.get("state_type") == "CANCELLED" and state.get("message") == COLLISION


def _holder(run: dict[str, Any]) -> Holder:
    state = run.get("state") or {}
    since = run.get("start_time") if run.get("state_type") == "RUNNING" else state.get("timestamp")
    return Holder(str(run["name"]), str(run["state_type"]).lower(), str(since or ""))


def collisions(api: PrefectApi, patience: Patience, bound: int = BOUND) -> list[Collisions]:
    """Each deployment with a concurrency limit whose newest ended run was a collision, with the
    collisions in a row (counted up to `bound`) and what holds its slot."""
    found = []
    holding: dict[str, list[Holder]] | None = None
    for deployment in deployments(api, patience):
        if not deployment.get("global_concurrency_limit"):
            continue
        body = {
            "flow_runs": {"deployment_id": {"any_": [deployment["id"]]}, "state": {"type": {"any_": list(ENDED)}}},
            "sort": "END_TIME_DESC",
            "limit": bound,
        }
        ended: list[dict[str, Any]] = request_patiently(api, "POST", "/flow_runs/filter", body, patience).json()
        in_a_row = next((i for i, run in enumerate(ended) if not _is_collision(run)), len(ended))
        if not in_a_row:
            continue
        if holding is None:
            holding = {}
            for run in active_runs(api, patience):
                holding.setdefault(run["deployment_id"], []).append(_holder(run))
        since = str(ended[in_a_row - 1].get("end_time") or "")
        found.append(Collisions(str(deployment["name"]), in_a_row, since, holding.get(deployment["id"], [])))
    return found
