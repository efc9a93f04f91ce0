"""`shipsync demo`: the whole pipeline against a local sandbox, with a short printed summary.

Starts the sandbox and the webhook receiver on free loopback ports, registers a webhook for every
kind, pulls everything, applies the example spreadsheets shipped with the package (dry run, for
real, and an undo), moves containers through their journeys so the sandbox delivers webhooks,
loads the event log, and shows what an analyst would look at first. No network, no key.
"""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import TypeVar

import duckdb
import httpx
from rich.console import Console
from rich.table import Table

from shipsync.bulk.apply import ApplyReport, apply_file
from shipsync.bulk.undo import undo_run
from shipsync.config import Settings, load_settings
from shipsync.pull.everything import pull_all
from shipsync.sandbox import DEFAULT_API_KEYS, SandboxOptions, create_app
from shipsync.serving import BackgroundServer
from shipsync.warehouse.status import warehouse_status
from shipsync.webhooks.load import load_events
from shipsync.webhooks.receiver import Receiver
from shipsync.webhooks.registration import delete_webhook, register_webhook
from shipsync.webhooks.writer import SpoolWriter

console = Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 140)
T = TypeVar("T")
JOURNEY_CONTAINERS = 25


def step(label: str, action: Callable[[], T], describe: Callable[[T], str]) -> T:
    started = time.monotonic()
    with console.status(label):
        result = action()
    console.print(f"[green]✓[/green] {label}: {describe(result)} [dim]({time.monotonic() - started:.1f} s)[/dim]")
    return result


def applied(report: ApplyReport) -> str:
    counts = report.counts
    parts = [f"{counts[s]} {s}" for s in ("planned", "applied", "unchanged", "rejected", "failed", "unknown") if counts[s]]
    return ", ".join(parts) + (f"; results in {report.results_file.name}" if report.results_file else "")


def example_files(workdir: Path) -> Path:
    target = workdir / "spreadsheets"
    target.mkdir(parents=True, exist_ok=True)
    for item in resources.files("shipsync.demo_data").iterdir():
        if item.name.endswith(".csv"):
            (target / item.name).write_bytes(item.read_bytes())
    return target


def wait_for_deliveries(sandbox_url: str, timeout: float = 60) -> dict[str, int]:
    deadline = time.monotonic() + timeout
    while True:
        # The sandbox shows an account its own deliveries: name it like any API request.
        admin = {"Authorization": f"Token {DEFAULT_API_KEYS[0]}"}
        stats: dict[str, int] = httpx.get(f"{sandbox_url}/_admin/deliveries", headers=admin, timeout=5).json()
        if stats["pending"] == 0 or time.monotonic() > deadline:
            return stats
        time.sleep(0.2)


def summary(warehouse: Path) -> None:
    tables, _ = warehouse_status(warehouse)
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        counts = Table("table", "rows", title="Warehouse")
        for name, rows in tables:
            counts.add_row(name, f"{rows:,}")
        console.print(counts)
        queries = {
            "Containers by port of discharge": """
                SELECT s.attributes->>'port_of_discharge_locode' AS port, m.name, count(*) AS containers
                FROM containers c JOIN shipments s ON s.id = (c.relationships->'shipment'->'data'->>'id')
                LEFT JOIN metro_areas m ON m.code = (s.attributes->>'port_of_discharge_locode')
                GROUP BY ALL ORDER BY containers DESC LIMIT 5""",
            "Documents by type": (
                "SELECT effective_document_type AS type, count(*) AS documents FROM document_overview GROUP BY 1 ORDER BY 2 DESC"
            ),
            "Latest milestone of five containers": """
                SELECT container_number, bill_of_lading, event, strftime(event_at, '%Y-%m-%d') AS day, locode, vessel
                FROM container_milestones QUALIFY row_number() OVER (PARTITION BY container_id ORDER BY event_at DESC) = 1
                ORDER BY container_number LIMIT 5""",
            "Custom field values by field": "SELECT api_slug, count(*) AS values FROM custom_fields GROUP BY 1 ORDER BY 2 DESC LIMIT 6",
        }
        for title, sql in queries.items():
            result = con.execute(sql)
            table = Table(*[d[0] for d in result.description or []], title=title)
            for row in result.fetchall():
                table.add_row(*["" if v is None else str(v) for v in row])
            console.print(table)
    finally:
        con.close()


def run_demo(*, workdir: str = "shipsync-demo", documents: int = 200) -> None:
    started = time.monotonic()
    root = Path(workdir).resolve()
    root.mkdir(parents=True, exist_ok=True)
    # The sandbox lives in memory and starts afresh each run, so the demo's files do too: each run
    # is the same run. Only what the demo itself wrote is removed.
    for name in ("shipsync.duckdb", "shipsync.duckdb.wal", "secrets.json"):
        (root / name).unlink(missing_ok=True)
    for folder in ("spool", "spreadsheets", ".shipsync", "shipsync.published"):
        shutil.rmtree(root / folder, ignore_errors=True)
    sheets = example_files(root)
    sandbox = create_app(SandboxOptions(documents=documents, rate_limit=None, delivery_retry_base_s=0.2))
    receiver = Receiver(SpoolWriter(root / "spool"), [])
    with BackgroundServer(sandbox) as sandbox_server, BackgroundServer(receiver) as receiver_server:
        settings: Settings = load_settings(
            api_url=f"{sandbox_server.url}/v2",
            api_key=DEFAULT_API_KEYS[0],
            rate_limit="0",
            warehouse=root / "shipsync.duckdb",
            spool=root / "spool",
            secrets_file=root / "secrets.json",  # the demo's own, not the user's store
        )
        console.print(
            f"[bold]shipsync demo[/bold]: sandbox {sandbox_server.url}/v2, receiver {receiver_server.url}/webhook, "
            f"warehouse {settings.warehouse}"
        )
        webhook = step(
            "register a webhook for every event kind",
            lambda: register_webhook(settings, f"{receiver_server.url}/webhook", [], all_events=True),
            lambda w: f"{len(w.events)} kinds, secret kept in {settings.secrets_file_path}",
        )
        assert webhook.secret is not None
        receiver.secrets.append(webhook.secret)
        step(
            "pull all",
            lambda: pull_all(settings),
            lambda records: "; ".join(f"{r.flow.removeprefix('pull_')} +{r.totals().inserted}/~{r.totals().updated}" for r in records),
        )
        step(
            "apply custom-field-definitions",
            lambda: apply_file(settings, "custom-field-definitions", sheets / "custom-field-definitions.csv"),
            applied,
        )
        step(
            "apply custom-fields (dry run)",
            lambda: apply_file(settings, "custom-fields", sheets / "container-tags.csv", dry_run=True),
            applied,
        )
        step("apply custom-fields", lambda: apply_file(settings, "custom-fields", sheets / "container-tags.csv"), applied)
        tags = step("apply tracking-requests", lambda: apply_file(settings, "tracking-requests", sheets / "tracking-requests.csv"), applied)
        step(f"undo run {tags.run_id[:8]}", lambda: undo_run(settings, tags.run_id), applied)

        def journeys() -> dict[str, int]:
            httpx.post(
                f"{sandbox_server.url}/_admin/simulate",
                params={"containers": JOURNEY_CONTAINERS},
                headers={"Authorization": f"Token {DEFAULT_API_KEYS[0]}"},
                timeout=60,
            ).raise_for_status()
            return wait_for_deliveries(sandbox_server.url)

        step(
            f"simulate {JOURNEY_CONTAINERS} container journeys",
            journeys,
            lambda s: f"{s['delivered']} signed deliveries acknowledged after fsync",
        )
        step(
            "load events",
            lambda: load_events(settings.warehouse, settings.spool_dir),
            lambda r: f"{r.loaded} new, {r.duplicates} duplicates, {r.entities_refreshed} entities refreshed",
        )
        step("delete the webhook", lambda: delete_webhook(settings, webhook.id), lambda _: "done")
    summary(settings.warehouse)
    console.print(f"[bold green]done[/bold green] in {time.monotonic() - started:.0f} s. Next:")
    console.print(f"  SHIPSYNC_WAREHOUSE={settings.warehouse} shipsync status")
    console.print(f"  duckdb -readonly {settings.warehouse}   (or python: duckdb.connect(path, read_only=True))")
    console.print("  the data dictionary: warehouse/README.md; the results files: " + str(sheets))
