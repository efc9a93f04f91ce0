"""Publish cost beside the run it follows, at N documents with a year of webhook events.

The warehouse is built as the pipeline builds it (document pages through `write_batch`, a year of
simulated container journeys through `events load`), then published in full. Then one minute's
deliveries (the year's rate per minute, at least 10) are loaded with `events load` and published:
the figure is that publish's time over the load's.
"""

from __future__ import annotations

import itertools
import shutil
import tempfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson

from shipsync.api.jsonapi import refs_of, relationship
from shipsync.bench.results import BenchResult, at_most
from shipsync.sandbox.deliver import envelope
from shipsync.sandbox.journey_plan import PlanBook
from shipsync.sandbox.journeys import simulate
from shipsync.sandbox.stream import document_pages
from shipsync.sandbox.world import Account
from shipsync.warehouse.declared_rows import observed_now
from shipsync.warehouse.load import write_batch
from shipsync.warehouse.normalize import document_page_columns
from shipsync.warehouse.publish import publish
from shipsync.warehouse.publishing import last_report, publishing
from shipsync.webhooks.framing import encode_record
from shipsync.webhooks.load import load_events

MINUTES_PER_YEAR = 365 * 24 * 60


def spooled_journeys(pages: Iterable[dict[str, Any]], *, containers: int = 10**9, seed: int | None = None) -> Iterator[bytes]:
    """Spool records (as the receiver writes them) of the journeys of up to `containers` containers
    of each document page: the deliveries a webhook of the account would receive."""
    records: list[bytes] = []

    def emit(_: Account, kind: str, reference: dict[str, object], included: list[dict[str, object]], at: str) -> None:
        records.append(encode_record(orjson.dumps(envelope("wh-bench", kind, reference, included, at)), 0))

    for number, page in enumerate(pages, start=1):
        account = Account(id="bench", company_name="bench")
        account.plans = PlanBook()
        for resource in page["included"]:
            account.add_related(resource)
        for shipment in account.of_type("shipment"):  # journeys planned for the boxes the documents name
            boxes = [box_id for _, box_id in refs_of(relationship(shipment, "containers"))]
            account.shipment_of.update(dict.fromkeys(boxes, str(shipment["id"])))
            account.plans.register(shipment, boxes)
        simulate(account, emit, containers=containers, seed=number if seed is None else seed)
        yield from records
        records.clear()


def _journeys(documents: int, spool: Path) -> int:
    """A year of events: every container of the documents travels once; returns how many."""
    spool.mkdir(parents=True, exist_ok=True)
    count = 0
    with (spool / "segment-00000000000000000000-1.spool").open("wb") as out:
        for record in spooled_journeys(document_pages(documents)):
            out.write(record)
            count += 1
    return count


def _build(documents: int, warehouse: Path) -> tuple[int, float]:
    """The warehouse at `documents` with a year of events, as the pipeline writes it (unpublished)."""
    started = time.perf_counter()
    pages = document_pages(documents)
    with publishing(warehouse):  # one publish at the end, measured on its own below
        batch: list[dict[str, object]] = []
        for page in pages:
            batch.append(page)
            if len(batch) == 50:
                _write_pages(warehouse, batch)
                batch = []
        if batch:
            _write_pages(warehouse, batch)
        events = _journeys(documents, warehouse.parent / "spool")
        load_events(warehouse, warehouse.parent / "spool")
        build = time.perf_counter() - started
        return events, build


def _write_pages(warehouse: Path, pages: list[dict[str, object]]) -> None:
    data = [d for p in pages for d in p["data"]]  # type: ignore[attr-defined]
    included = [r for p in pages for r in p["included"]]  # type: ignore[attr-defined]
    owners = [d["id"] for d in data]
    columns = document_page_columns(data, included, observed_now())
    write_batch(warehouse, columns, run_id="bench", link_owners={"document_shipments": owners, "document_containers": owners})


def _minute(events_per_year: int, spool: Path, documents: int) -> int:
    """One minute of deliveries at the year's rate (at least 10), as new notifications."""
    wanted = max(10, round(events_per_year / MINUTES_PER_YEAR))
    records = itertools.islice(spooled_journeys(document_pages(min(documents, 100), seed=99), containers=wanted, seed=7), wanted)
    (spool / "segment-00000000000000000001-1.spool").write_bytes(b"".join(records))
    return wanted


def publish_cost(documents: int) -> list[BenchResult]:
    with tempfile.TemporaryDirectory(prefix="shipsync-bench-") as tmp:
        warehouse = Path(tmp) / "warehouse" / "shipsync.duckdb"
        events, build = _build(documents, warehouse)  # its scope's end is the full publish, timed next
        shutil.rmtree(warehouse.parent / "shipsync.published")
        warehouse.unlink()
        full = publish(warehouse)
        size = sum(p.stat().st_size for p in warehouse.parent.joinpath(".shipsync").glob("*.duckdb")) / 1e6
        spool = warehouse.parent / "spool"
        minute = _minute(events, spool, documents)
        started = time.perf_counter()
        report = load_events(warehouse, spool)  # as `events load` runs: the load, then its publish on the same connection
        whole = time.perf_counter() - started
        minute_publish = last_report(warehouse)
        if report.loaded != minute or minute_publish is None or minute_publish.generation is None:
            raise RuntimeError(f"loaded {report.loaded} of {minute} notifications; published: {minute_publish}")
        published, loaded = minute_publish.seconds, whole - minute_publish.seconds
    label = f"{documents:,} documents + a year of events ({events:,}; pipeline file {size:,.0f} MB)"
    return [
        at_most(f"full publish, {label}", full.seconds, "s", f"building it ({build:.0f} s)", build, 0.25),
        at_most(
            f"publish after a one-minute events load ({minute} notifications), {label}",
            published,
            "s",
            "that events load",
            loaded,
            1.0,
        ),
    ]
