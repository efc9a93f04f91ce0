"""The Prefect side of `shipsync up`: the server and worker commands, the work pool, the deployments
of prefect.yaml, and reading back what is deployed. Talks to the server over HTTP and runs the
deploy command (which creates the pool if missing) as a child process, so `up` itself never imports
Prefect (and starts in a second).
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from shipsync.errors import ConfigError, ShipsyncError
from shipsync.safe_files import open_log

POOL = "shipsync"
# The queue deployments go to when prefect.yaml names none. up's worker polls only this one, so a
# worker elsewhere can be given work of its own on another queue of the pool.
QUEUE = "default"


def server_command(host: str, port: int) -> list[str]:
    return [sys.executable, "-m", "prefect", "server", "start", "--host", host, "--port", str(port)]


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


def ensure_process_pool(name: str = POOL) -> bool:
    """The process work pool `name`, created as `prefect work-pool create NAME --type process` would
    (the process worker's job template) when the server has none; True if it was created. For the
    deploy command's process, which imports Prefect anyway: up itself does not."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import WorkPoolCreate
    from prefect.exceptions import ObjectAlreadyExists, ObjectNotFound
    from prefect.workers.process import ProcessWorker

    with get_client(sync_client=True) as client:
        try:
            client.read_work_pool(name)
            return False
        except ObjectNotFound:
            pass
        template = ProcessWorker.get_default_base_job_template()
        try:
            client.create_work_pool(WorkPoolCreate(name=name, type="process", base_job_template=template))
        except ObjectAlreadyExists:  # another deploy created it meanwhile
            return False
    return True


def deploy(env: dict[str, str], project_dir: Path, log: Path) -> None:
    """The work pool and every deployment of prefect.yaml, with its schedules (`shipsync deploy`)."""
    if not (project_dir / "prefect.yaml").exists():
        raise ConfigError(f"no prefect.yaml in {project_dir}: run shipsync up from the project folder, or pass --project-dir")
    run_logged("deploying prefect.yaml", [sys.executable, "-m", "shipsync", "deploy"], env, project_dir, log)


# A Prefect server on SQLite answers 503 while another writer holds its file (measured: while its
# own scheduler and the first flow runs start, on a busy machine): up waits on it, not fails.
BUSY_BACKOFF_S = (0.5, 1.0, 2.0, 5.0, 10.0, 15.0, 30.0)


def _patiently(method: str, url: str, body: dict[str, Any]) -> httpx.Response:
    """One request to Prefect's API, again after a 502/503/504 or a dropped connection."""
    for wait in (*BUSY_BACKOFF_S, None):
        try:
            response = httpx.request(method, url, json=body, timeout=30)
            if response.status_code not in (502, 503, 504) or wait is None:
                return response.raise_for_status()
        except httpx.TransportError:
            if wait is None:
                raise
        time.sleep(wait)
    raise AssertionError("unreachable: the last attempt returns or raises")


def deployments(api_url: str) -> list[dict[str, Any]]:
    response = _patiently("POST", f"{api_url}/deployments/filter", {"limit": 200})
    found: list[dict[str, Any]] = response.json()
    return sorted(found, key=lambda d: str(d["name"]))


def set_interval(api_url: str, deployment: str, seconds: float) -> None:
    """Run `deployment` every `seconds` instead of its prefect.yaml schedules (until the next deploy)."""
    matches = [d for d in deployments(api_url) if d["name"] == deployment]
    if not matches:
        raise ConfigError(f"--interval {deployment}={seconds:g}: no deployment {deployment!r} in prefect.yaml")
    body = {"schedules": [{"schedule": {"interval": seconds}, "active": True}]}
    _patiently("PATCH", f"{api_url}/deployments/{matches[0]['id']}", body)


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


def redacted_database(url: str | None, home: Path) -> str:
    """The database to print: the URL without its password, or where the default SQLite file is."""
    if not url:
        return f"SQLite {home / 'prefect.db'}"
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # a URL SQLAlchemy cannot read: Prefect will say so; print nothing of it
        return "(the given --database-url)"
