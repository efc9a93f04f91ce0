"""`shipsync up` (everything production needs on one host, kept running) and what `status` shows of it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.table import Table

from shipsync.cli.common import console, line, one_line_errors, settings_from_env, styled

if TYPE_CHECKING:
    from shipsync.orchestration.state import StateDir


def _intervals(values: list[str]) -> dict[str, float]:
    intervals = {}
    for value in values:
        name, _, seconds = value.partition("=")
        try:
            intervals[name.strip()] = float(seconds)
        except ValueError:
            raise typer.BadParameter(f"{value!r}: use DEPLOYMENT=SECONDS, such as load-events=10") from None
        if not name.strip() or intervals[name.strip()] <= 0:
            raise typer.BadParameter(f"{value!r}: use DEPLOYMENT=SECONDS, such as load-events=10")
    return intervals


@one_line_errors
def up(
    prefect_port: int = typer.Option(4200, help="Port of the Prefect server (API and UI)."),
    receiver_port: int = typer.Option(8701, help="Port of the webhook receiver."),
    database_url: str | None = typer.Option(
        None,
        envvar="SHIPSYNC_PREFECT_DATABASE_URL",
        help="Prefect's database, e.g. postgresql+asyncpg://USER:PASSWORD@HOST:5432/prefect (default: SQLite in the state folder).",
    ),
    prefect_host: str = typer.Option(
        "127.0.0.1", help="Address the Prefect server listens on (0.0.0.0 for workers on other hosts; its API asks for a credential)."
    ),
    receiver_host: str = typer.Option("127.0.0.1", help="Address the webhook receiver listens on (0.0.0.0 for the service to reach it)."),
    project_dir: Path = typer.Option(
        Path("."), envvar="SHIPSYNC_PROJECT_DIR", help="The project folder with prefect.yaml and flows/ (default: here)."
    ),
    interval: list[str] = typer.Option(
        [], "--interval", help="DEPLOYMENT=SECONDS: run it at that interval instead of its prefect.yaml schedule, until the next up."
    ),
    first_pull: bool = typer.Option(
        True, "--first-pull/--no-first-pull", help="Run pull-all at start when the warehouse has never pulled everything."
    ),
) -> None:
    """Start a Prefect server, the work pool, the deployments of prefect.yaml, a worker and the webhook
    receiver, and keep them running; Ctrl-C or SIGTERM stops them all (each
    killed after its grace period).

    Flow runs an earlier up left running are marked crashed at start, and their one-at-a-time slots
    given back. On a warehouse that has never pulled everything, up runs pull-all at once.
    Prefect's API asks every client for the credential kept in the state folder (`prefect/api-auth-string`)."""
    from shipsync.orchestration.up import UpOptions, run_up

    settings = settings_from_env()
    options = UpOptions(
        project_dir.resolve(),
        settings.state_dir,
        prefect_host=prefect_host,
        receiver_host=receiver_host,
        prefect_port=prefect_port,
        receiver_port=receiver_port,
        database_url=database_url,
        intervals=_intervals(interval),
        first_pull=first_pull,
    )
    raise typer.Exit(run_up(options, settings, lambda text: console.print(line(text))))


def show_up(state_dir: Path) -> bool:
    """The `shipsync up` part of `shipsync status`: is it running, each of its processes (and why one
    is kept stopped), and the deployments whose runs keep colliding. False when a deployment is
    blocked (see `orchestration.collisions`): status then exits with 1."""
    from shipsync.orchestration.state import StateDir, running_as

    state = StateDir(state_dir.resolve())
    recorded = state.read()
    if not state.is_held():
        note = " (it did not stop cleanly: the next up cleans up)" if recorded else ""
        console.print(line(f"shipsync up: not running in {state.root}{note}"))
        return True
    recorded = recorded or {}
    console.print(line(f"shipsync up: running (pid {recorded.get('pid', '?')}), state in {state.root}"))
    table = Table("process", "pid", "running", "where")
    stopped = []
    for name, child in (recorded.get("children") or {}).items():
        pid, command = child.get("pid"), child.get("command") or []
        alive = isinstance(pid, int) and running_as(pid, command)
        table.add_row(line(name), line(pid or ""), "yes" if alive else "no", line(child.get("where") or ""))
        if child.get("stopped_because"):
            stopped.append(f"{name} not started: {child['stopped_because']}")
    console.print(table)
    for text in stopped:
        console.print(line(styled("error:", "red"), " ", text))
    return _show_collisions(state, recorded.get("prefect_api"))


def _show_collisions(state: StateDir, api_url: object) -> bool:
    """Deployments whose newest runs were cancelled as collisions, from up's Prefect API; False if
    one is blocked."""
    import httpx

    from shipsync.orchestration.api_auth import CREDENTIAL_FILE, PrefectApi
    from shipsync.orchestration.collisions import collisions
    from shipsync.orchestration.deployments import Patience

    credential = state.prefect_home / CREDENTIAL_FILE
    if not isinstance(api_url, str) or not credential.exists():
        return True
    try:
        found = collisions(PrefectApi(api_url, credential.read_text().strip()), Patience(pauses=(), timeout_s=10.0))
    except httpx.HTTPError as exc:
        console.print(line(styled("Prefect's API did not answer", "yellow"), f" ({type(exc).__name__}): collisions not checked"))
        return True
    for found_one in found:
        if found_one.blocked:
            console.print(line(styled("error:", "red"), " ", found_one.describe()))
        else:
            console.print(line(found_one.describe()))
    return not any(c.blocked for c in found)
