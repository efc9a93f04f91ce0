"""`shipsync up` as an operator runs it: one command brings up a real Prefect server, the work pool,
the deployments of prefect.yaml and a worker; scheduled `load-events` runs move webhook deliveries
into the warehouse with nothing else started; deployments share one rate budget; a worker with its
own working directory (as on another host) runs flow runs; nobody without the credential reaches the
Prefect API, no run brings its own command, and Prefect's state is private; up stops promptly, and
after a crash the next up cleans up. Stops are never timed assertions: a stop that hangs is killed
and reported."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from shipsync.orchestration.api_auth import PrefectApi
from shipsync.orchestration.state import running_as
from shipsync.serving import stop_process
from shipsync_bench.processes import SandboxProcess, UpProcess
from shipsync_sandbox.reference import METRO_AREAS
from support.docs_blocks import docs_block
from support.prefect_up import KEY, ROOT, answers, api, query, run_deployments, up_env
from support.waiting import HANG_S, wait_for

LOCODES = [code for code, *_ in METRO_AREAS]
STOP_HANG_S = 600.0  # only an up that hangs: it stops within its grace periods, about 10 s
pytestmark = pytest.mark.slow


class Running:
    def __init__(self, up: UpProcess, sandbox: SandboxProcess, env: dict[str, str], tmp: Path) -> None:
        self.up, self.sandbox, self.env, self.tmp = up, sandbox, env, tmp
        self.warehouse = Path(env["SHIPSYNC_WAREHOUSE"])

    def shipsync(self, *args: str, timeout: float = 300, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "shipsync", *args]
        return subprocess.run(command, env=env or self.env, cwd=ROOT, capture_output=True, text=True, timeout=timeout, check=False)

    def children(self) -> dict[str, dict[str, Any]]:
        state: dict[str, Any] = json.loads((self.tmp / "state" / "up.json").read_text())
        return state["children"]


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    tmp = tmp_path_factory.mktemp("up")
    with SandboxProcess("--rate-limit", "20/2", "--documents", "60", "--api-key", KEY) as sandbox:
        # A webhook secret and the spool's folder from the start: the receiver runs whichever test
        # comes first (each test process starts this up of its own).
        env = up_env(tmp, sandbox.api_url, SHIPSYNC_WEBHOOK_SECRETS="a-secret-the-operator-set-by-hand")
        Path(env["SHIPSYNC_WAREHOUSE"]).mkdir(mode=0o700)
        # load-events every 20 s instead of prefect.yaml's minute, for this up only (shorter only piles up
        # runs that the deployment's concurrency limit cancels: a machine this busy starts one in ~30 s).
        # No first pull: the tests pull when they need to, and a pull-all run of up's own would hold
        # that deployment's slot.
        up = UpProcess("--interval", "load-events=20", "--no-first-pull", env=env, cwd=ROOT).start()
        try:
            yield Running(up, sandbox, env, tmp)
        finally:
            up.stop()


def test_deployments_share_one_rate_budget(running: Running) -> None:
    prefect, env = running.up.prefect_api, running.env
    assert [state for _, state in run_deployments(env, prefect, [("pull_all/pull-all", {})])] == ["COMPLETED"]
    ids = [row[0] for row in query(running.warehouse, "SELECT id FROM documents ORDER BY id")]
    assert len(ids) == 60
    before = running.sandbox.stats()
    started = time.monotonic()
    # Two flow runs at once on one key: 60 documents by id and a forced refresh of 28 metro areas.
    states = run_deployments(
        env,
        prefect,
        [
            ("pull_documents/pull-documents", {"parameters": {"ids": ids, "all_documents": False}}),
            ("pull_metro_areas/pull-metro-areas", {"parameters": {"force": True, "locodes": LOCODES}}),
        ],
    )
    elapsed = time.monotonic() - started
    after = running.sandbox.stats()
    assert [state for _, state in states] == ["COMPLETED", "COMPLETED"]
    requests = int(after["admitted"]) - int(before["admitted"])  # type: ignore[call-overload]
    assert elapsed >= 6  # 88 requests at 20 per 2 s take at least 3 full windows beyond the first burst
    runs = query(
        running.warehouse,
        "SELECT status, throttled, retries FROM sync_runs WHERE flow IN ('pull_documents', 'pull_metro_areas') "
        "ORDER BY started_at DESC LIMIT 2",
    )
    assert {r[0] for r in runs} == {"completed"} and {r[1] for r in runs} == {0}
    # One request per document and per area, and none refused; a request the client timed out and
    # retried (when both cores are busy) is admitted twice, and its run counts the retry.
    retried = sum(int(r[2] or 0) for r in runs)
    assert requests == 60 + 28 + retried and after["refused_429"] == 0, (requests, retried)


def test_scheduled_load_events_move_deliveries_into_the_warehouse(running: Running) -> None:
    # Registered while up runs: up starts the receiver once the webhook's secret is stored.
    registered = running.shipsync("webhooks", "register", "--url", running.up.receiver_url, "--all-events")
    assert registered.returncode == 0, registered.stderr
    health = running.up.receiver_url.replace("/webhook", "/healthz")
    wait_for(lambda: answers(health), "the receiver to start")
    simulated = httpx.post(
        f"{running.sandbox.url}/_admin/simulate", params={"containers": 3}, headers={"Authorization": f"Token {KEY}"}, timeout=60
    )
    simulated.raise_for_status()
    delivered = wait_for(lambda: _delivered(running.sandbox.url), "the sandbox's deliveries")
    count = "SELECT count(*) FROM webhook_events"
    wait_for(lambda: query(running.warehouse, count)[0][0] >= delivered, f"{delivered} events in the warehouse", every_s=2)
    load_events = next(d for d in api(running.up.prefect_api, "/deployments/filter", {"limit": 50}) if d["name"] == "load-events")
    flow_runs = api(
        running.up.prefect_api, "/flow_runs/filter", {"flow_runs": {"deployment_id": {"any_": [load_events["id"]]}}, "limit": 200}
    )
    assert any(r["auto_scheduled"] and r["state_type"] == "COMPLETED" for r in flow_runs)


def test_every_schedule_of_prefect_yaml_gets_scheduled_runs(running: Running) -> None:
    # Cron and interval alike: Prefect's scheduler makes runs ahead for each (a cron it cannot
    # compute would leave its deployment without runs, and say so only in the server's log).
    prefect = running.up.prefect_api
    scheduled = {d["name"]: d["id"] for d in api(prefect, "/deployments/filter", {"limit": 50}) if d.get("schedules")}
    project = yaml.safe_load((ROOT / "prefect.yaml").read_text())
    assert set(scheduled) == {d["name"] for d in project["deployments"] if d.get("schedules")}

    def without_runs() -> list[str]:
        return [
            name
            for name, deployment_id in sorted(scheduled.items())
            if not any(
                run["auto_scheduled"]  # not the runs up starts itself (the catch-up, the first pull)
                for run in api(prefect, "/flow_runs/filter", {"flow_runs": {"deployment_id": {"any_": [deployment_id]}}, "limit": 20})
            )
        ]

    wait_for(lambda: not without_runs(), f"scheduled runs of every deployment (none yet: {without_runs()})", timeout_s=600, every_s=5)


def test_commands_beside_up_draw_its_budget_and_end_quietly(running: Running) -> None:
    # An operator's shell beside up: the CLI draws the workers' rate budget through Prefect's API.
    env = {**running.env, **running.up.prefect_api.client_env()}
    pulled = running.shipsync("pull", "all", env=env)
    [(number,)] = query(running.warehouse, "SELECT number FROM containers ORDER BY id LIMIT 1")
    sheet = running.tmp / "tags.csv"
    sheet.write_text(f"container_number,po_number\n{number},PO-QUIET\n")
    applied = running.shipsync("apply", "custom-fields", str(sheet), env=env)
    [(run_id,)] = query(
        running.warehouse, "SELECT run_id FROM sync_runs WHERE flow = 'apply_custom_fields' ORDER BY started_at DESC LIMIT 1"
    )
    undone = running.shipsync("apply", "undo", str(run_id), env=env)
    for done in (pulled, applied, undone):
        assert done.returncode == 0, done.stderr[-2000:]
        chatter = [line for line in done.stderr.splitlines() if re.search(r"\b(INFO|DEBUG)\b|View at", line)]
        assert not chatter, f"{done.args[3:]}: " + "\n".join(chatter[:10])


def test_a_second_up_says_so_and_status_shows_what_runs(running: Running) -> None:
    second = running.shipsync("up", "--prefect-port", str(running.up.prefect_port))
    assert second.returncode == 0 and "already running" in second.stdout, second.stdout + second.stderr
    status = running.shipsync("status")
    assert "shipsync up: running" in status.stdout, status.stdout + status.stderr
    for name in ("server", "worker", "receiver"):
        assert re.search(rf"│ {name}\s+│ \d+\s+│ yes", status.stdout), status.stdout


def test_a_worker_elsewhere_runs_flow_runs(running: Running, tmp_path: Path) -> None:
    # What another host runs: the project and its environment, the Prefect API URL, the shared
    # warehouse and spool; a working directory and Prefect home of its own.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    # The credential an operator gives it, read from up's state folder.
    env = {**running.env, **running.up.prefect_api.client_env(), "PREFECT_HOME": str(elsewhere / ".prefect")}
    env["SHIPSYNC_PROJECT_DIR"] = str(ROOT)
    env["PATH"] = f"{Path(sys.executable).parent}:{env.get('PATH', '')}"  # what `uv run` puts first
    # The worker's command as docs/operations.md shows it.
    shown = docs_block(ROOT / "docs" / "operations.md", "### Workers on other hosts").splitlines()[-1]
    assert shown == 'uv run prefect worker start --pool shipsync --work-queue elsewhere --name "$(hostname)"', shown
    command = ["bash", "-c", f"exec {shown.removeprefix('uv run ')}"]
    with (elsewhere / "worker.log").open("wb") as log:
        worker = subprocess.Popen(command, env=env, cwd=elsewhere, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        # A queue of its own, so that this worker, not up's (which polls `default`), takes the run.
        api(running.up.prefect_api, "/work_pools/shipsync/queues", {"name": "elsewhere"})
        options = {"parameters": {"force": True, "locodes": ["USLAX"]}, "work_queue_name": "elsewhere"}
        [(run_id, state)] = run_deployments(running.env, running.up.prefect_api, [("pull_metro_areas/pull-metro-areas", options)])
    finally:
        stop_process(worker, group=True)
    assert state == "COMPLETED"
    assert run_id in (elsewhere / "worker.log").read_text(errors="replace")  # it was this worker's run
    assert query(running.warehouse, "SELECT count(*) FROM metro_areas WHERE code = 'USLAX'") == [(1,)]


def test_prefect_refuses_a_client_without_the_credential(running: Running) -> None:
    prefect = running.up.prefect_api
    assert httpx.get(f"{prefect.url}/health", timeout=30).status_code == 200  # the health probe needs none
    wrong = PrefectApi(prefect.url, "shipsync:guessed")
    for headers in ({}, wrong.headers, {"Authorization": "Bearer " + (prefect.auth_string or "")}):
        for method, path in (("POST", "/deployments/filter"), ("POST", "/block_documents/filter"), ("GET", "/work_pools/shipsync")):
            answer = httpx.request(method, f"{prefect.url}{path}", json={}, headers=headers, timeout=30)
            assert answer.status_code == 401, (method, path, headers.keys(), answer.text[:200])
    # Prefect's own client, as an intruder on this host would use it, is refused too.
    anonymous = {**running.env, "PREFECT_API_URL": prefect.url, "PREFECT_HOME": str(running.tmp / "anonymous")}
    refused = subprocess.run(
        [sys.executable, "-c", "from prefect.deployments import run_deployment; run_deployment('pull_all/pull-all', timeout=0)"],
        env=anonymous,
        capture_output=True,
        text=True,
        timeout=HANG_S,
        check=False,
    )
    assert refused.returncode != 0 and "401" in refused.stderr, refused.stderr[-1500:]
    assert api(prefect, "/deployments/filter", {"limit": 50})  # with the credential, it answers


def test_a_run_cannot_bring_its_own_command_environment_or_folder(running: Running) -> None:
    prefect = running.up.prefect_api
    marker = running.tmp / "ran-an-intruders-command"
    [deployment] = [d for d in api(prefect, "/deployments/filter", {"limit": 50}) if d["name"] == "pull-shipping-lines"]
    overrides: list[dict[str, Any]] = [
        {"command": f"touch {marker}"},
        {"env": {"SHIPSYNC_API_URL": "http://127.0.0.1:9/v2"}},
        {"env.SHIPSYNC_PROJECT_DIR": str(running.tmp)},
        {"working_dir": str(running.tmp)},
    ]
    for job_variables in overrides:
        created = httpx.post(
            f"{prefect.url}/deployments/{deployment['id']}/create_flow_run",
            json={"job_variables": job_variables},
            headers=prefect.headers,
            timeout=30,
        )
        assert created.status_code == 422, (job_variables, created.text[:300])
    # A flow run made directly (the server does not check these job variables) runs as any other.
    direct = api(
        prefect,
        "/flow_runs/",
        {
            "flow_id": deployment["flow_id"],
            "deployment_id": deployment["id"],
            "work_pool_name": "shipsync",
            "work_queue_name": "default",
            "state": {"type": "SCHEDULED", "name": "Scheduled"},
            "job_variables": {"command": f"touch {marker}", "env": {"SHIPSYNC_API_URL": "http://127.0.0.1:9/v2"}},
        },
    )
    state = wait_for(lambda: _final_state(prefect, direct["id"]), "the direct flow run to end", every_s=2)
    assert state == "COMPLETED" and not marker.exists()  # the deployment's flow ran, on the real service


def test_the_state_folder_and_prefects_database_are_private(running: Running) -> None:
    state = running.tmp / "state"
    home = state / "prefect"
    credential_file = home / "api-auth-string"
    modes = {path.name: oct(path.stat().st_mode & 0o777) for path in (state, home, credential_file, home / "prefect.db")}
    assert modes == {"state": "0o700", "prefect": "0o700", "api-auth-string": "0o600", "prefect.db": "0o600"}
    credential = credential_file.read_text().strip()
    assert len(credential) > 40
    written = running.up.output + "".join(p.read_text(errors="replace") for p in (state / "logs").iterdir())
    assert credential not in written and credential not in (state / "up.json").read_text()
    # Prefect listens on loopback only (its own flag, --prefect-host, says otherwise).
    assert _listening_addresses(running.up.prefect_port) == {"127.0.0.1"}


def test_the_api_key_is_in_no_block(running: Running) -> None:
    # The worker has the key from the operator's environment; nothing on the server holds it.
    blocks = httpx.post(
        f"{running.up.prefect_api.url}/block_documents/filter",
        params={"include_secrets": "true"},
        json={"limit": 200},
        headers=running.up.prefect_api.headers,
        timeout=30,
    )
    blocks.raise_for_status()
    variables = api(running.up.prefect_api, "/variables/filter", {"limit": 200})
    assert KEY not in blocks.text and KEY not in json.dumps(variables)


def test_the_commands_docs_show_for_clients_of_up_work_as_shown(running: Running) -> None:
    # docs/prefect.md, "Clients of up's Prefect", run as written: only the port and the state
    # folder are this up's, and `uv run` is this environment's PATH.
    script = docs_block(ROOT / "docs" / "prefect.md", "### Clients of up's Prefect")
    assert "uv run prefect deployment ls" in script and "uv run prefect flow-run ls" in script
    script = script.replace("127.0.0.1:4200", f"127.0.0.1:{running.up.prefect_port}")
    script = script.replace(".shipsync/", f"{running.tmp / 'state'}/").replace("uv run ", "")
    env = {k: v for k, v in running.env.items() if not k.startswith("PREFECT_API")}
    env["PATH"] = f"{Path(sys.executable).parent}:{env.get('PATH', '')}"
    env["COLUMNS"] = "200"  # the tables' names in full
    done = subprocess.run(["bash", "-e", "-c", script], env=env, cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert "load_events/load-events" in done.stdout and "pull_all/pull-all" in done.stdout, done.stdout
    assert re.search(r"│ [0-9a-f-]{36}", done.stdout.split("load_events/load-events")[-1]), done.stdout  # a flow-run table with runs


def test_up_stops_its_processes_and_cleans_up_after_a_crash(running: Running) -> None:
    up = running.up
    children = running.children()
    assert up.process is not None
    os.kill(up.process.pid, signal.SIGKILL)  # a crash: no chance to stop anything
    up.process.wait()
    alive = lambda: [name for name, c in children.items() if running_as(c["pid"], c["command"])]  # noqa: E731
    gone = lambda: not alive()  # noqa: E731
    try:
        # A Prefect worker can take well over 30 s to stop when both cores are busy: a slow stop is
        # not the failure this looks for, a process that never stops is.
        wait_for(gone, "up's processes to stop with it")
    except AssertionError as exc:
        raise AssertionError(f"{exc}; still running: {', '.join(alive())}") from None
    up.start()
    assert "cleaned up after an up that did not stop" in up.output
    children = running.children()
    # up stops its children within its own grace periods (seconds); the bound is a hang guard only.
    seconds = up.stop(timeout_s=STOP_HANG_S)
    print(f"shipsync up stopped in {seconds} s; its own report: {up.lines[-1]}")
    assert seconds is not None, f"hang guard: up did not stop within {STOP_HANG_S:.0f} s of SIGTERM:\n" + up.output[-2000:]
    assert up.process is not None and up.process.returncode == 0
    assert gone() and not (running.tmp / "state" / "up.json").exists()


def _final_state(prefect: PrefectApi, flow_run_id: str) -> str | None:
    answer = httpx.get(f"{prefect.url}/flow_runs/{flow_run_id}", headers=prefect.headers, timeout=30)
    answer.raise_for_status()
    state = answer.json().get("state") or {}
    return str(state["type"]) if state.get("type") in ("COMPLETED", "FAILED", "CRASHED", "CANCELLED") else None


def _listening_addresses(port: int) -> set[str]:
    """The IPv4 addresses a socket listens on at `port` (from /proc/net/tcp: state 0A is LISTEN)."""
    found = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local, state = line.split()[1], line.split()[3]
        address, port_hex = local.split(":")
        if state == "0A" and int(port_hex, 16) == port:
            found.add(".".join(str(int(address[i : i + 2], 16)) for i in (6, 4, 2, 0)))
    return found


def _delivered(sandbox_url: str) -> int:
    stats = httpx.get(f"{sandbox_url}/_admin/deliveries", headers={"Authorization": f"Token {KEY}"}, timeout=10).json()
    return int(stats["delivered"]) if stats["pending"] == 0 and stats["delivered"] else 0
