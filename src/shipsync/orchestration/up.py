"""`shipsync up`: one command that starts what production needs on one host and keeps it running.

In order: a Prefect server (its own SQLite database in the state folder, or `--database-url`), the
flow runs an earlier up left running marked crashed (their slots given back), the `shipsync`
process work pool, every deployment of prefect.yaml with its schedules, a worker, the webhook receiver
(`shipsync webhooks serve`, once a webhook secret is stored) with a run of `catch-up-events` for
what the service sent while no receiver listened, and a first `pull-all` when the warehouse has
no pulled data. Then it prints where each is and watches them until Ctrl-C or SIGTERM,
when it stops them all, each killed after its grace period; it says when a deployment's runs keep colliding.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

import httpx

from shipsync.config import Settings
from shipsync.errors import ConfigError, ShipsyncError
from shipsync.orchestration import api_auth, collisions, deployments, stranded_runs
from shipsync.orchestration.api_auth import CREDENTIAL_FILE, PrefectApi, api_credential
from shipsync.orchestration.children import Child
from shipsync.orchestration.deployments import BRIEF, PATIENT, Patience
from shipsync.orchestration.environment import made_private, prefect_env
from shipsync.orchestration.first_pull import never_pulled
from shipsync.orchestration.project import require_project
from shipsync.orchestration.server import redacted_database, server_command
from shipsync.orchestration.state import StateDir, stop_leftovers
from shipsync.orchestration.supervisor import Supervisor
from shipsync.redaction import register_credentials_in
from shipsync.serving import wait_until_answers


@dataclass(frozen=True)
class UpOptions:
    project_dir: Path
    state_dir: Path
    # Each listens on loopback unless told otherwise: the receiver faces the service, Prefect's API
    # only the operator and workers.
    prefect_host: str = "127.0.0.1"
    receiver_host: str = "127.0.0.1"
    prefect_port: int = 4200
    receiver_port: int = 8701
    database_url: str | None = None
    intervals: dict[str, float] = field(default_factory=dict)
    first_pull: bool = True  # pull everything at start when the warehouse has no pulled data


CATCH_UP = "catch-up-events"  # the deployment up runs at start (see `webhooks.catch_up`)
FIRST_PULL = "pull-all"  # the deployment up runs at start on a warehouse with no pulled data
COLLISIONS_EVERY_S = 60.0  # how often up looks for deployments whose runs keep colliding
LEFT_BY_EARLIER_UP = "left running by a shipsync up that stopped"
LEFT_AT_STOP = "its worker stopped with shipsync up before it ended"
LEFT_BY_WORKER = "its worker exited before it ended"


class StopRequested(BaseException):
    """Ctrl-C or SIGTERM: unwinds whatever up is doing (a start-up wait, a deploy) to the stop."""


def run_up(options: UpOptions, settings: Settings, say: Callable[[str], None]) -> int:
    state = StateDir(options.state_dir.resolve())
    lock = state.acquire()
    if lock is None:
        running = state.read() or {}
        say(f"shipsync up is already running (pid {running.get('pid', '?')}); `shipsync status` shows what it runs")
        for name, child in (running.get("children") or {}).items():
            say(f"  {name}: {child.get('where', '')}")
        return 0
    try:
        leftovers = state.read()
        if leftovers is not None:
            stopped = stop_leftovers(leftovers)
            state.clear()
            say(f"cleaned up after an up that did not stop (pid {leftovers.get('pid')}); stopped: {', '.join(stopped) or 'nothing'}")
        # Its children run in the project folder: the paths they share with up are given whole.
        os.environ.update(anchored_paths(settings, state.root))
        started_at = time.time()
        api = _prefect_api(options, state)
        supervisor = Supervisor(say, on_start=lambda: state.write(_record(started_at, api, supervisor)))
        with _stop_on_signals():
            try:
                _start_everything(options, settings, state, api, supervisor, say)
                say(f"everything is up ({time.time() - started_at:.0f} s); Ctrl-C or SIGTERM stops it")
                supervisor.watch()
            except StopRequested:
                pass
            finally:
                _ignore_signals()
                asked = time.monotonic()
                outcome = supervisor.stop_all(before_server=lambda: _recover(api, LEFT_AT_STOP, BRIEF, say, server_restarted=False))
                state.clear()
                killed = ", ".join(name for name, stopped in outcome.items() if not stopped)
                say(f"stopped in {time.monotonic() - asked:.1f} s" + (f" ({killed} killed after the grace period)" if killed else ""))
    finally:
        os.close(lock)
    return 0


def anchored_paths(settings: Settings, state_root: Path) -> dict[str, str]:
    """The settings up's children read as paths, made absolute where up runs: the worker and the
    receiver run in the project folder, where a relative path names another place (a spool
    nobody loads, a second warehouse)."""
    paths = {"SHIPSYNC_STATE_DIR": str(state_root), "SHIPSYNC_SPOOL": str(settings.spool_dir.resolve())}
    folder = settings.lake.folder
    if folder is not None and not settings.warehouse.startswith("ducklake:"):
        paths["SHIPSYNC_WAREHOUSE"] = str(folder.resolve())
    return paths


def _record(started_at: float, api: PrefectApi, supervisor: Supervisor) -> dict[str, object]:
    """up.json: this up, its Prefect API and its children as they run now (rewritten whenever one
    starts or is kept stopped)."""
    children = {name: child.record() for name, child in supervisor.children.items()}
    return {"pid": os.getpid(), "started": started_at, "prefect_api": api.url, "children": children}


def _prefect_api(options: UpOptions, state: StateDir) -> PrefectApi:
    """The API of the Prefect server this up runs, with its credential (created at the first start)."""
    ui = f"http://{_connect_host(options.prefect_host)}:{options.prefect_port}"
    return PrefectApi(f"{ui}/api", api_credential(made_private(state.prefect_home)))


def _start_everything(
    options: UpOptions, settings: Settings, state: StateDir, api: PrefectApi, supervisor: Supervisor, say: Callable[[str], None]
) -> None:
    require_project(options.project_dir)
    _check_free(options.prefect_host, options.prefect_port, "--prefect-port")
    _check_free(options.receiver_host, options.receiver_port, "--receiver-port")
    register_credentials_in(options.database_url)
    ui = api.url.removesuffix("/api")
    credential = api.auth_string
    assert credential is not None  # `_prefect_api` always gives it one
    server_env = prefect_env(state.prefect_home, database_url=options.database_url, extra=api_auth.server_env(credential))
    # The worker's environment is the operator's: SHIPSYNC_API_KEY reaches flow runs from there.
    client_env = prefect_env(state.prefect_home, extra={**api.client_env(), "SHIPSYNC_PROJECT_DIR": str(options.project_dir)})
    command = server_command(options.prefect_host, options.prefect_port)
    # Its SQLite files are the server's alone (0600), in a home that is too (0700).
    server = supervisor.add(Child("server", command, server_env, state.root, state.logs / "server.log", ui, umask=0o077))
    say(f"starting the Prefect server on {ui} ({redacted_database(options.database_url, state.prefect_home)})")
    assert server.process is not None
    try:
        wait_until_answers(f"{api.url}/health", server.process, timeout_s=300)
    except RuntimeError as exc:
        raise ShipsyncError(f"the Prefect server did not start ({exc}); its log: {server.log}") from None
    # Nothing of this up runs yet, and the server's leases of an earlier one are gone with it. Done
    # first: while a slot stays taken, the server cancels each run of it that it marks late.
    _recover(api, LEFT_BY_EARLIER_UP, PATIENT, say, server_restarted=True)
    setup_log = state.logs / "setup.log"
    say(f"deploying prefect.yaml to the work pool {deployments.POOL}")
    deployments.deploy(client_env, options.project_dir, setup_log)
    for name, seconds in options.intervals.items():
        deployments.set_interval(api, name, seconds)
    worker = Child("worker", deployments.worker_command(), client_env, options.project_dir, state.logs / "worker.log")
    worker.where = f"pool {deployments.POOL}, queue {deployments.QUEUE}"
    # Before the worker starts again, what it left running is marked crashed: no run holds a slot for good.
    worker.check = lambda: _recover(api, LEFT_BY_WORKER, PATIENT, say, server_restarted=False)
    supervisor.add(worker)
    receiver_url = f"http://{_connect_host(options.receiver_host)}:{options.receiver_port}/webhook"
    receiver_command = [sys.executable, "-m", "shipsync", "webhooks", "serve"]
    receiver_command += ["--host", options.receiver_host, "--port", str(options.receiver_port)]
    receiver = Child("receiver", receiver_command, dict(os.environ), options.project_dir, state.logs / "receiver.log", receiver_url)
    receiver.check = lambda: _receiver_can_start(settings)
    has_secrets = _receiver_inputs(settings)()
    supervisor.add(receiver, start=bool(has_secrets))
    supervisor.receiver_follows(_receiver_inputs(settings))
    if has_secrets:
        # What the service sent while no receiver listened (up was down, or is new): listed again.
        flow_run = deployments.run_now(api, CATCH_UP)
        say(f"catching up the event log since its last delivery ({CATCH_UP}, flow run {flow_run})")
    if options.first_pull and never_pulled(settings.lake):
        flow_run = deployments.run_now(api, FIRST_PULL)
        say(f"the warehouse has no pulled data yet: pulling everything now ({FIRST_PULL}, flow run {flow_run}; --no-first-pull skips this)")
    supervisor.every(COLLISIONS_EVERY_S, _collision_watch(api, say))
    _say_where(say, options, settings, state, api, receiver, bool(has_secrets))


def _recover(api: PrefectApi, reason: str, patience: Patience, say: Callable[[str], None], *, server_restarted: bool) -> None:
    """Mark crashed the runs on up's queue that hold a slot while up's worker is not running (see
    `stranded_runs`), and say what was done. Prefect out of reach only delays it: the next start,
    stop or worker start of up does it."""
    try:
        done = stranded_runs.recover(api, reason, patience, server_restarted=server_restarted)
    except httpx.HTTPError as exc:
        say(f"could not look for flow runs left running ({type(exc).__name__}: {exc}); the next start of up or its worker does")
        return
    if text := done.describe():
        say(text)


def _collision_watch(api: PrefectApi, say: Callable[[str], None]) -> Callable[[], None]:
    """What up does every COLLISIONS_EVERY_S: say once when a deployment becomes blocked (its runs
    cancelled as collisions BOUND times in a row), and once when it runs again."""
    told: set[str] = set()

    def check() -> None:
        try:
            found = collisions.collisions(api, Patience(pauses=(), timeout_s=10.0))
        except httpx.HTTPError:
            return  # a busy server: the next check sees it
        blocked = {c.deployment: c for c in found if c.blocked}
        for name in sorted(blocked.keys() - told):
            say(f"error: {blocked[name].describe()}")
        for name in sorted(told - blocked.keys()):
            say(f"{name} runs again: its runs are no longer cancelled as collisions")
        told.clear()
        told.update(blocked)

    return check


def _receiver_can_start(settings: Settings) -> None:
    """The receiver's own set-up, done and undone here: its secrets and spool folder, which fail with
    a one-line ShipsyncError when its settings cannot work."""
    from shipsync.webhooks.server import build_receiver

    build_receiver(settings).writer.close()


def _say_where(
    say: Callable[[str], None], options: UpOptions, settings: Settings, state: StateDir, api: PrefectApi, receiver: Child, receiving: bool
) -> None:
    ui = api.url.removesuffix("/api")
    say(f"  Prefect UI        {ui}   (API {api.url}; database {redacted_database(options.database_url, state.prefect_home)})")
    say(f"  Prefect login     the credential in {state.prefect_home / CREDENTIAL_FILE} (PREFECT_API_AUTH_STRING for clients)")
    for deployment in deployments.deployments(api):
        say(f"  deployment        {deployment['name']:<24} {deployments.describe_schedules(deployment)}")
    say(f"  worker            pool {deployments.POOL} (queue {deployments.QUEUE}), working in {options.project_dir}")
    if receiving:
        say(f"  webhook receiver  {receiver.where}   (spool {settings.spool_dir})")
    else:
        say(
            f"  webhook receiver  starts at {receiver.where} once a webhook is registered: "
            "shipsync webhooks register --url https://<public address>/webhook --all-events"
        )
    say(f"  warehouse         {settings.lake.describe()}")
    say(f"  logs and state    {state.root}")


def _receiver_inputs(settings: Settings) -> Callable[[], object]:
    """What changes when the receiver's inputs do: the secrets store file's identity (None while
    there is no secret), and whether the spool's folder exists (the receiver makes the spool only)."""
    from shipsync.webhooks.secrets_store import load_secrets, store_path

    def version() -> object:
        try:
            stat = store_path(settings).stat()
        except OSError:
            stat = None
        if not load_secrets(settings):
            return None
        secrets = (stat.st_mtime_ns, stat.st_size, stat.st_ino) if stat else "environment"
        return (secrets, settings.spool_dir.parent.is_dir())

    return version


def _check_free(host: str, port: int, option: str) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            raise ConfigError(f"port {port} on {host} is in use: stop what holds it, or choose another with {option}") from None


def _connect_host(host: str) -> str:
    return "127.0.0.1" if host in ("0.0.0.0", "") else host


def _raise_stop(signum: int, frame: FrameType | None) -> None:
    raise StopRequested


def _ignore_signals() -> None:
    # While stopping, a second Ctrl-C must not cut the stop short: the grace periods bound it.
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, signal.SIG_IGN)


@contextmanager
def _stop_on_signals() -> Iterator[None]:
    saved = {signum: signal.signal(signum, _raise_stop) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for signum, handler in saved.items():
            signal.signal(signum, handler)
