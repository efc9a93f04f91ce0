"""Request bounds of the pulls (issues 14 and 35): the first full backfill of a large seeded
account, the same `pull all` again at once with nothing changed, then a day's `pull all` after 1%
changed, found by polling, and another day with a webhook delivering the changes to a real
receiver. The bound of a day is what the reference makes necessary: the documents created since
the last run or within the re-check window, the tracking requests' one page, and without a webhook
feed the shipments created and the containers refreshed since the last run's marks (the listing
pages read down to the mark: the sandbox lists in the reference's order, which the walk sees),
plus one transport events request per changed container (the containers listing carries only
their linkage). The backfill reads every container's events the same way."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from shipsync.config import Settings
from shipsync.pull.listing_marks import MARK
from shipsync.warehouse.analyst import read_only
from shipsync.warehouse.ledger import last_success_parameter
from shipsync.warehouse_location import LakeLocation
from shipsync.webhooks.load import load_events
from shipsync.webhooks.receiver import Receiver
from shipsync.webhooks.registration import register_webhook
from shipsync.webhooks.writer import SpoolWriter
from shipsync_bench.bounds_common import KEY, Sandbox, bounded, counted, pages, settings_for
from shipsync_bench.processes import SandboxProcess
from shipsync_bench.results import BenchResult, at_most
from shipsync_sandbox.admin_client import wait_for_deliveries
from shipsync_sandbox.serving import BackgroundServer

SINGLES = ("pull_places", "pull_metro_areas", "pull_document_schemas")  # one request per record


def singles_of(records: list[Any]) -> int:
    """Records that no listing carries (ports, terminals, vessels, metro areas, schemas) and that
    this run had to read: one GET each, as many as those pulls asked for (the bound takes their
    choice of what is stale as given)."""
    return sum(int(record.stats.requests) for record in records if record.flow in SINGLES)


def _walked(warehouse: LakeLocation, sql: str) -> int:
    """A count over what the warehouse holds after a daily run: the records that run had to read."""
    with read_only(warehouse) as con:
        row = con.execute(sql).fetchone()
    return int(row[0]) if row else 0


def _recent_documents(warehouse: LakeLocation, mark: str | None, recheck_days: float) -> int:
    """Documents created after the last run's mark, or within the re-check window before it."""
    return _walked(
        warehouse, f"SELECT count(*) FROM documents WHERE created_at >= TIMESTAMPTZ '{mark}' - to_seconds({recheck_days * 86400:.0f})"
    )


def _marks(warehouse: LakeLocation) -> dict[str, str | None]:
    with read_only(warehouse) as con:
        return {flow: last_success_parameter(con, flow, MARK) for flow in ("pull_documents", "pull_shipments", "pull_containers")}


def polling_day(warehouse: LakeLocation, marks: dict[str, str | None], recheck_days: float, singles: int, moved: int) -> tuple[int, str]:
    """The fewest requests a day's `pull all` needs without a webhook feed: the documents created
    after the last mark or within the re-check window before it (the job re-reads those), the
    tracking requests' one page, the shipments created and the containers refreshed since the last
    marks (one page at least, to see that nothing else is new), one events request per container
    that `moved`, and the single records."""
    documents = _recent_documents(warehouse, marks["pull_documents"], recheck_days)
    shipments = _walked(warehouse, f"SELECT count(*) FROM shipments WHERE created_at > TIMESTAMPTZ '{marks['pull_shipments']}'")
    refreshed = _walked(
        warehouse,
        "SELECT count(*) FROM containers WHERE greatest(pod_last_tracking_request_at, shipment_last_tracking_request_at)"
        f" > TIMESTAMPTZ '{marks['pull_containers']}'",
    )
    bound = pages(documents) + 1 + max(1, pages(shipments)) + max(1, pages(refreshed)) + moved + singles
    formula = (
        f"documents new or in the {recheck_days:g}-day re-check window {pages(documents)} + tracking requests 1"
        f" + shipments created {max(1, pages(shipments))} + containers refreshed ({refreshed:,}) {max(1, pages(refreshed))}"
        f" + events of changed containers {moved} + records no listing carries {singles}"
    )
    return bound, formula


def deliveries_received(sandbox: Sandbox, settings: Settings) -> None:
    """Wait until the sandbox has delivered what it owes, then load the spool (not counted: pushed)."""
    if wait_for_deliveries(sandbox.process.url, KEY)["pending"]:
        raise RuntimeError("the sandbox did not deliver within 10 minutes")
    load_events(settings.lake, settings.spool_dir)


def daily_sync(documents: int, containers: int) -> list[BenchResult]:
    """The first full backfill of an account; a day later the daily `pull all` after 1% changed,
    found by polling; a day after that, the same with a webhook delivering the changes."""
    from shipsync.pull.everything import pull_all

    shipments = max(1, containers * 2 // 5)
    args = ["--rate-limit", "0", "--documents", str(documents), "--api-key", KEY]
    args += ["--shipments", str(shipments), "--containers", str(containers)]
    account = f"{documents:,} documents, {containers:,} containers"
    with tempfile.TemporaryDirectory(prefix="shipsync-bounds-") as tmp, SandboxProcess(*args) as process:
        sandbox = Sandbox(process)
        settings = settings_for(sandbox, Path(tmp))
        requests = sandbox.total("tracking_requests")
        spent, records = counted(sandbox, lambda: pull_all(settings))
        singles = singles_of(records)
        # Shipments: every one comes included with its containers (none is without), so 0 pages.
        # Transport events: the listing carries their linkage only, one request per container.
        bound = pages(documents) + pages(containers) + containers + pages(requests) + 1 + singles
        formula = (
            f"documents {pages(documents)} + containers {pages(containers)} + their events {containers:,}"
            f" + tracking requests {pages(requests)} + carriers 1 + records no listing carries {singles}"
        )
        results = [bounded(f"first full backfill, pull all ({account})", spent, bound, formula)]
        first = spent
        spent, records = counted(sandbox, lambda: pull_all(settings))
        results.append(
            at_most(
                f"pull all again at once, nothing changed ({account}): {spent:,} requests, of the first run's {first:,}",
                float(spent),
                "requests",
                "10% of the first run",
                first / 10,
                1.0,
            )
        )
        new, moved = documents // 100, containers // 100
        marks = _marks(settings.lake)
        changed = sandbox.advance(f"hours=24&documents={new}&containers={moved}")
        spent, records = counted(sandbox, lambda: pull_all(settings))
        bound, formula = polling_day(settings.lake, marks, settings.document_recheck_days, singles_of(records), int(changed["containers"]))
        results.append(bounded(f"daily sync, pull all, 1% changed, found by polling ({account})", spent, bound, formula))

        receiver = Receiver(SpoolWriter(settings.spool_dir), [])
        with BackgroundServer(receiver) as hooks:
            webhook = register_webhook(settings, f"{hooks.url}/webhook", [], all_events=True)  # once, not daily: not counted
            receiver.secrets.append(str(webhook.secret))
            marks = _marks(settings.lake)
            changed = sandbox.advance(f"hours=24&documents={new}&containers={moved}")
            deliveries_received(sandbox, settings)
        spent, records = counted(sandbox, lambda: pull_all(settings))
        singles = singles_of(records)
        documents_read = _recent_documents(settings.lake, marks["pull_documents"], settings.document_recheck_days)
        bound = pages(documents_read) + 1 + singles
        formula = (
            f"documents new or in the re-check window {pages(documents_read)} + tracking requests 1"
            f" + {changed['containers']} changed containers 0 (delivered) + records no listing carries {singles}"
        )
        results.append(bounded(f"daily sync, pull all, 1% changed, webhooks delivering ({account})", spent, bound, formula))
    return results
