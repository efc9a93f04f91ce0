"""`shipsync demo`: the whole pipeline as Prefect flow runs against a local sandbox, then what an
analyst would look at first. No network, no key, no server to start by hand.

Starts Prefect's embedded API (its database in the demo folder), the sandbox in this process and
the webhook receiver as its own process, on free loopback ports. Then each step in `STEPS` runs:
registering a webhook, pulling everything, applying the example spreadsheets shipped with the
package (dry run, for real, and an undo), having the sandbox deliver the signed webhooks of some
containers' journeys (played up to now, never past it), loading the event log. Every step but the
simulation is the flow a deployment runs. Prints the flow runs (state, duration, rows, artifacts),
the warehouse's tables and a few analyst queries.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, NamedTuple

import duckdb
import httpx

from shipsync.config import Settings, load_settings
from shipsync.safe_files import make_folders, open_log, write_bytes
from shipsync.serving import stop_process, wait_until_answers
from shipsync.warehouse.analyst import read_only
from shipsync.warehouse.unit_of_work import open_warehouse
from shipsync_demo.embedded_prefect import EmbeddedPrefect
from shipsync_demo.show import ANALYST_QUERIES, analyst_query, console, show_flow_runs, show_pickup_risk, show_query
from shipsync_sandbox import DEFAULT_API_KEYS, SandboxOptions, create_app
from shipsync_sandbox.admin_client import wait_for_deliveries
from shipsync_sandbox.serving import BackgroundServer, free_port
from shipsync_sandbox.timeline import SEEDED_SPAN

JOURNEY_CONTAINERS = 25
STATUSES = ("planned", "applied", "unchanged", "rejected", "failed", "unknown")


class Told(NamedTuple):
    """What a step prints after its name, and the rows its flow run wrote (None: not a count of rows)."""

    text: str
    rows: int | None = None


@dataclass
class Demo:
    """What the steps share: where things are, and what earlier steps made."""

    root: Path
    settings: Settings
    sandbox_url: str
    receiver_url: str
    prefect: EmbeddedPrefect
    processes: ExitStack
    step: str = ""
    made: dict[str, str] = field(default_factory=dict)
    rows: dict[str, int | None] = field(default_factory=dict)
    _reader: duckdb.DuckDBPyConnection | None = None

    def flow(self, entrypoint: str, **parameters: Any) -> Any:
        """Run the flow at `entrypoint` (as prefect.yaml names it) as a flow run of this step; its result."""
        return self.prefect.run(self.step, entrypoint, **parameters)

    def query(self, sql: str, *parameters: Any) -> list[tuple[Any, ...]]:
        return analyst_query(self.reader, sql, list(parameters))[1]

    @property
    def reader(self) -> duckdb.DuckDBPyConnection:
        """The demo's one read-only connection, opened at its first read and closed with the demo's
        processes."""
        if self._reader is None:
            self._reader = self.processes.enter_context(read_only(self.settings.lake))
        return self._reader

    @property
    def last_flow_run(self) -> str:
        return self.prefect.runs[-1].flow_run_id


@dataclass(frozen=True)
class Step:
    """One line of the demo: `run` does it (usually through `demo.flow`), `tell` says what it did."""

    label: str
    run: Callable[[Demo], Any]
    tell: Callable[[Demo, Any], Told]


# The flows the steps run, named as prefect.yaml names them: entrypoints relative to the project folder.
REGISTER = "flows/webhooks.py:register"
DELETE = "flows/webhooks.py:delete"
LOAD_EVENTS = "flows/webhooks.py:load_events"
PULL_ALL = "flows/pull.py:pull_all"
APPLY = "flows/bulk.py:apply_spreadsheet"
UNDO = "flows/bulk.py:undo_apply"
REPORT = "flows/report.py:report"
FLOWS = (REGISTER, DELETE, LOAD_EVENTS, PULL_ALL, APPLY, UNDO, REPORT)


def register(demo: Demo) -> str:
    demo.made["webhook"] = demo.flow(REGISTER, url=f"{demo.receiver_url}/webhook", all_events=True)
    return demo.made["webhook"]


def start_receiver(demo: Demo) -> int:
    """`shipsync webhooks serve`, as an operator runs it, now that the webhook's secret is stored."""
    log = open_log(demo.root / "receiver.log")  # removed by fresh_workdir: a new file
    command = [sys.executable, "-m", "shipsync", "webhooks", "serve", "--port", demo.receiver_url.rsplit(":", 1)[1]]
    receiver = subprocess.Popen([*command, "--spool", str(demo.settings.spool_dir)], stdout=log, stderr=subprocess.STDOUT)
    demo.processes.callback(log.close)
    demo.processes.callback(stop_process, receiver)
    wait_until_answers(f"{demo.receiver_url}/healthz", receiver)
    return receiver.pid


def apply(kind: str, sheet: str, dry_run: bool = False) -> Callable[[Demo], str]:
    def run(demo: Demo) -> str:
        run_id: str = demo.flow(APPLY, kind=kind, file=str(demo.root / "spreadsheets" / sheet), dry_run=dry_run)
        demo.made[kind] = run_id
        return run_id

    return run


def undo_tracking_requests(demo: Demo) -> str:
    return str(demo.flow(UNDO, run_id=demo.made["tracking-requests"]))


def applied(demo: Demo, run_id: str) -> Told:
    counts = dict(demo.query("SELECT status, count(*) FROM bulk_results WHERE run_id = ? GROUP BY 1", run_id))
    text = ", ".join(f"{counts[s]} {s}" for s in STATUSES if counts.get(s))
    return Told(f"{text}; results in bulk_results and NAME.EXT.KIND.results.csv beside the file", sum(counts.values()))


def pulled(demo: Demo, _: None) -> Told:
    runs = demo.query(
        "SELECT flow, sum(CAST(c.value->>'inserted' AS BIGINT)), sum(CAST(c.value->>'updated' AS BIGINT)) "
        "FROM sync_runs, json_each(table_counts) AS c WHERE prefect_flow_run_id = ? GROUP BY flow ORDER BY min(started_at)",
        demo.last_flow_run,
    )
    return Told("; ".join(f"{flow.removeprefix('pull_')} +{new}/~{changed}" for flow, new, changed in runs), sum(r[1] + r[2] for r in runs))


def pull_all(demo: Demo) -> None:
    demo.flow(PULL_ALL)


def journeys(demo: Demo) -> dict[str, int]:
    httpx.post(
        f"{demo.sandbox_url}/_admin/simulate",
        params={"containers": JOURNEY_CONTAINERS},
        headers={"Authorization": f"Token {DEFAULT_API_KEYS[0]}"},
        timeout=60,
    ).raise_for_status()
    return wait_for_deliveries(demo.sandbox_url, DEFAULT_API_KEYS[0])


def load_events(demo: Demo) -> int:
    return int(demo.flow(LOAD_EVENTS))


def build_report(demo: Demo) -> str:
    """The report flow over the sandbox's whole world (it starts now; its journeys SEEDED_SPAN before)."""
    days = SEEDED_SPAN.days + 2
    return str(demo.flow(REPORT, output=str(demo.root / "report.html"), days=days))


def delete_webhook(demo: Demo) -> None:
    demo.flow(DELETE, webhook_id=demo.made["webhook"])


# The demo, in order. A step is a label, what it runs, and what it says; add one by adding a line.
STEPS: list[Step] = [
    Step("register a webhook for every event kind", register, lambda d, _: Told("its secret kept in the local store")),
    Step("start the webhook receiver", start_receiver, lambda d, _: Told(f"`shipsync webhooks serve`, log in {d.root / 'receiver.log'}")),
    Step("pull all", pull_all, pulled),
    Step("apply custom-field-definitions", apply("custom-field-definitions", "custom-field-definitions.csv"), applied),
    Step("apply custom-fields (dry run)", apply("custom-fields", "container-tags.csv", dry_run=True), applied),
    Step("apply custom-fields", apply("custom-fields", "container-tags.csv"), applied),
    Step("apply tracking-requests", apply("tracking-requests", "tracking-requests.csv"), applied),
    Step("undo the tracking-requests run", undo_tracking_requests, applied),
    Step(
        f"deliver {JOURNEY_CONTAINERS} containers' journeys up to now",
        journeys,
        lambda d, s: Told(f"{s['delivered']} signed deliveries stored"),
    ),
    Step("load events", load_events, lambda d, n: Told(f"{n} new events in webhook_events", n)),
    Step("delete the webhook", delete_webhook, lambda d, _: Told("done")),
    Step("build the report", build_report, lambda d, path: Told(str(path))),
]


def run_step(demo: Demo, step: Step) -> None:
    started, runs_before, demo.step = time.monotonic(), len(demo.prefect.runs), step.label
    with console.status(step.label):
        told = step.tell(demo, step.run(demo))
    if len(demo.prefect.runs) > runs_before:
        demo.rows[demo.last_flow_run] = told.rows
    console.print(f"[green]✓[/green] {step.label}: {told.text} [dim]({time.monotonic() - started:.1f} s)[/dim]")


def fresh_workdir(workdir: str) -> Path:
    """The demo's folder, emptied of what a previous run wrote, with the example spreadsheets.

    The sandbox lives in memory and starts afresh each run, so the demo's files do too: each run
    is the same run. Only what the demo itself wrote is removed.
    """
    root = make_folders(Path(workdir).resolve())
    for name in ("secrets.json", "receiver.log", "report.html"):
        (root / name).unlink(missing_ok=True)
    # Not prefect/: its database keeps every run's flow runs. warehouse/ is the lake.
    for folder in ("spool", "spreadsheets", "warehouse"):
        shutil.rmtree(root / folder, ignore_errors=True)
    example_files(root)
    return root


def example_files(workdir: Path) -> Path:
    """The demo's example spreadsheets, copied into `workdir/spreadsheets` (their results land there)."""
    target = make_folders(workdir / "spreadsheets")
    for item in resources.files("shipsync_demo.data").iterdir():
        if item.name.endswith(".csv"):
            write_bytes(target / item.name, item.read_bytes())
    return target


def run_demo(prefect: EmbeddedPrefect, *, workdir: str = "shipsync-demo", documents: int = 200, started: float | None = None) -> None:
    """The demo, on `prefect` (entered: its server starting); `started` is when the command began."""
    started = time.monotonic() if started is None else started
    root = fresh_workdir(workdir)
    prefect.load(FLOWS)
    with ExitStack() as processes:
        sandbox = create_app(SandboxOptions(documents=documents, rate_limit=None, delivery_retry_base_s=0.2))
        sandbox_server = processes.enter_context(BackgroundServer(sandbox))
        receiver_url = f"http://127.0.0.1:{free_port()}"
        environment = {
            "SHIPSYNC_API_URL": f"{sandbox_server.url}/v2",
            "SHIPSYNC_API_KEY": DEFAULT_API_KEYS[0],
            "SHIPSYNC_RATE_LIMIT": "0",
            "SHIPSYNC_WAREHOUSE": str(root / "warehouse"),
            "SHIPSYNC_SPOOL": str(root / "spool"),
            "SHIPSYNC_SECRETS_FILE": str(root / "secrets.json"),  # the demo's own, not the user's store
        }
        os.environ.update(environment)  # the flows read their settings from the environment, as on a worker
        settings = load_settings()
        # The lake's tables and views, made as the first writer would make them, while Prefect's
        # server is still starting (its process is busy; this one would wait).
        with open_warehouse(settings.lake):
            pass
        prefect.wait_until_ready()
        demo = Demo(root, settings, sandbox_server.url, receiver_url, prefect, processes)
        console.print(
            f"[bold]shipsync demo[/bold]: sandbox {sandbox_server.url}/v2, Prefect's API embedded for this run "
            f"(started in {prefect.started_in:.1f} s; its runs kept in {prefect.database}), receiver {receiver_url}/webhook, "
            f"warehouse {demo.settings.lake.describe()}"
        )
        for step in STEPS:
            run_step(demo, step)
        flow_runs = prefect.read_back(demo.rows)
        show_flow_runs(flow_runs)
        for title, sql in {"Warehouse": None, **ANALYST_QUERIES}.items():
            show_query(title, demo.reader, sql)
        show_pickup_risk(demo.reader)
    console.print(f"[bold green]done[/bold green] in {time.monotonic() - started:.0f} s. Next:")
    console.print(f"  SHIPSYNC_WAREHOUSE={demo.settings.warehouse} shipsync status")
    console.print(f"  SHIPSYNC_WAREHOUSE={demo.settings.warehouse} shipsync sql   (or --print-attach: the statements for any DuckDB)")
    console.print("  the data dictionary: warehouse/README.md; the results files: " + str(root / "spreadsheets"))
    console.print("  the flow runs in the Prefect UI:")
    for line in prefect.browse_hint():
        console.print(f"    {line}")
