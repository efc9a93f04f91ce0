"""The work pool and the deployments of prefect.yaml on a Prefect server: the worker's command, the
process pool (created by `shipsync deploy`), the deploy command as a child process, and reading back
what is deployed over HTTP, so that `up` itself never imports Prefect (and starts in a second).
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from shipsync.errors import ConfigError, ShipsyncError
from shipsync.orchestration.api_auth import PrefectApi
from shipsync.safe_files import open_log

POOL = "shipsync"
# The queue deployments go to when prefect.yaml names none. up's worker polls only this one, so a
# worker elsewhere can be given work of its own on another queue of the pool.
QUEUE = "default"


def worker_command() -> list[str]:
    name = f"{socket.gethostname()}-up"
    return [sys.executable, "-m", "prefect", "worker", "start", "--pool", POOL, "--type", "process", "--work-queue", QUEUE, "--name", name]


def run_logged(what: str, command: list[str], env: dict[str, str], cwd: Path, log: Path, timeout_s: float = 300) -> None:
    """Run a setup command to its end, its output appended to `log`; ShipsyncError if it fails."""
    with open_log(log) as out:
        out.write(f"$ {' '.join(command)}\n".encode())
        out.flush()
        try:
            done = subprocess.run(command, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out, stderr=out, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            raise ShipsyncError(f"{what} took more than {timeout_s:.0f} s; its output is in {log}") from None
    if done.returncode != 0:
        tail = log.read_text(errors="replace").strip().splitlines()[-1:] or [""]
        raise ShipsyncError(f"{what} failed (exit {done.returncode}): {tail[0][:300]}; the whole output is in {log}")


# What a flow run's job variables could use to run something other than the deployment's flow:
# its own command, environment (SHIPSYNC_API_URL pointed elsewhere gets the key sent there;
# SHIPSYNC_PROJECT_DIR, other code loaded) or working folder.
NOT_OVERRIDABLE = ("command", "env", "working_dir")


def locked_job_template() -> dict[str, Any]:
    """The process worker's job template without what a run could turn into code of its own.

    The variables a run may set no longer include `NOT_OVERRIDABLE`, and no others are allowed: the
    server refuses (422) a deployment or a run that sets one. The job configuration does not take
    them either, so a run that slipped past the server would still start as the worker starts any:
    `python -m prefect.engine` with the worker's environment, in the folder prefect.yaml's pull step
    names.
    """
    from prefect.workers.process import ProcessWorker

    template: dict[str, Any] = ProcessWorker.get_default_base_job_template()
    for name in NOT_OVERRIDABLE:
        template["job_configuration"].pop(name, None)
        template["variables"]["properties"].pop(name, None)
    template["variables"]["additionalProperties"] = False
    return template


def ensure_process_pool(name: str = POOL) -> str | None:
    """The process work pool `name` with the locked job template: created when the server has none,
    its template replaced when it differs (a pool made before, or edited since). What was done
    ("created", "locked"), or None. For the deploy command's process, which imports Prefect anyway:
    up itself does not."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import WorkPoolCreate, WorkPoolUpdate
    from prefect.exceptions import ObjectAlreadyExists, ObjectNotFound

    template = locked_job_template()
    with get_client(sync_client=True) as client:
        try:
            pool = client.read_work_pool(name)
        except ObjectNotFound:
            try:
                client.create_work_pool(WorkPoolCreate(name=name, type="process", base_job_template=template))
                return "created"
            except ObjectAlreadyExists:  # another deploy created it meanwhile: checked below
                pool = client.read_work_pool(name)
        if pool.base_job_template == template:
            return None
        client.update_work_pool(name, WorkPoolUpdate(base_job_template=template))
    return "locked"


def run_prefect_command(args: list[str]) -> int:
    """Run Prefect's own command line (`prefect ARGS`) in this process; its exit status."""
    from prefect.cli import app

    saved, sys.argv = sys.argv, ["prefect", *args]
    try:
        app()
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
    finally:
        sys.argv = saved
    return 0


def deploy(env: dict[str, str], project_dir: Path, log: Path) -> None:
    """The work pool and every deployment of prefect.yaml, with its schedules (`shipsync deploy`)."""
    run_logged("deploying prefect.yaml", [sys.executable, "-m", "shipsync", "deploy"], env, project_dir, log)


# A Prefect server on SQLite answers 503 while another writer holds its file (its own scheduler and
# the first flow runs start at once): up waits on it, not fails.
BUSY_BACKOFF_S = (0.5, 1.0, 2.0, 5.0, 10.0, 15.0, 30.0)


@dataclass(frozen=True)
class Patience:
    """How a request to Prefect's API waits on a busy server: the pauses between its attempts, and
    each attempt's timeout."""

    pauses: tuple[float, ...] = BUSY_BACKOFF_S
    timeout_s: float = 30.0


PATIENT = Patience()
# While up stops, within its grace period: one short attempt (what it leaves, the next up does).
BRIEF = Patience(pauses=(), timeout_s=3.0)


def request_patiently(api: PrefectApi, method: str, path: str, body: dict[str, Any], patience: Patience = PATIENT) -> httpx.Response:
    """One request to Prefect's API, again after a 502/503/504 or a dropped connection."""
    for wait in (*patience.pauses, None):
        try:
            response = httpx.request(method, f"{api.url}{path}", json=body, headers=api.headers, timeout=patience.timeout_s)
            if response.status_code not in (502, 503, 504) or wait is None:
                return response.raise_for_status()
        except httpx.TransportError:
            if wait is None:
                raise
        time.sleep(wait)
    raise AssertionError("unreachable: the last attempt returns or raises")


def deployments(api: PrefectApi, patience: Patience = PATIENT) -> list[dict[str, Any]]:
    """The deployments of the work pool `shipsync`, by name."""
    body = {"work_pools": {"name": {"any_": [POOL]}}, "limit": 200}
    found: list[dict[str, Any]] = request_patiently(api, "POST", "/deployments/filter", body, patience).json()
    return sorted(found, key=lambda d: str(d["name"]))


def run_now(api: PrefectApi, deployment: str) -> str:
    """Start a run of `deployment` now (with its prefect.yaml parameters): the id of its flow run."""
    matches = [d for d in deployments(api) if d["name"] == deployment]
    if not matches:
        raise ConfigError(f"no deployment {deployment!r} in prefect.yaml")
    created = request_patiently(api, "POST", f"/deployments/{matches[0]['id']}/create_flow_run", {})
    return str(created.json()["id"])


def set_interval(api: PrefectApi, deployment: str, seconds: float) -> None:
    """Run `deployment` every `seconds` instead of its prefect.yaml schedules (until the next deploy)."""
    matches = [d for d in deployments(api) if d["name"] == deployment]
    if not matches:
        raise ConfigError(f"--interval {deployment}={seconds:g}: no deployment {deployment!r} in prefect.yaml")
    body = {"schedules": [{"schedule": {"interval": seconds}, "active": True}]}
    request_patiently(api, "PATCH", f"/deployments/{matches[0]['id']}", body)


def describe_schedules(deployment: dict[str, Any]) -> str:
    parts = []
    for entry in deployment.get("schedules") or []:
        schedule = entry.get("schedule") or {}
        if "interval" in schedule:
            parts.append(f"every {float(schedule['interval']):g} s")
        elif "cron" in schedule:
            parts.append(f"cron {schedule['cron']} {schedule.get('timezone') or 'UTC'}")
        elif "rrule" in schedule:
            parts.append(f"rrule {schedule['rrule']}")
    return ", ".join(parts) or "on demand"
