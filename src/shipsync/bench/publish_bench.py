"""Publish cost beside the run it follows, at N documents with a year of webhook events.

The warehouse is built as the pipeline builds it: document pages through `write_batch`, and a year
of the sandbox's simulated container journeys (`journey_year`) through the spool and `events load`
(in batches of 64 MB: the year's load is a build step, not what is measured, and the default 4 MB
batches take twice as long at this size). Then it is published in full. Then one minute's
deliveries (the year's rate per minute, at least 10) are loaded with `events load` and published:
the figure is that publish's time over the load's.

`SHIPSYNC_BENCH_CACHE=/some/folder` keeps each size's built warehouse there (with how long the
build took) and starts from a copy of it next time: for iterating on publishing without building
100,000 documents again. Clear it when the generator or the warehouse's schema changes.
"""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
import time
from pathlib import Path

import orjson

from shipsync.bench.journey_year import SegmentWriter, spooled_journeys
from shipsync.bench.results import BenchResult, at_most
from shipsync.sandbox.stream import document_pages
from shipsync.warehouse.declared_rows import observed_now
from shipsync.warehouse.layout import analysts_file, publication_dir
from shipsync.warehouse.load import write_batch
from shipsync.warehouse.normalize import document_page_columns
from shipsync.warehouse.publish import publish
from shipsync.warehouse.publishing import last_report, publishing
from shipsync.webhooks.load import load_events
from shipsync.webhooks.spool import SpoolSizes

MINUTES_PER_YEAR = 365 * 24 * 60
PAGES_PER_WRITE = 50
YEAR_LOAD = SpoolSizes(load_bytes=64 * 1024 * 1024)
BUILT = "build.json"  # in a cached warehouse's folder: {"events": ..., "seconds": ...}


def _build(documents: int, warehouse: Path) -> tuple[int, float]:
    """The warehouse at `documents` with a year of events, as the pipeline writes it; (events, seconds)."""
    started = time.perf_counter()
    spool = warehouse.parent / "spool"
    segments = SegmentWriter(spool)
    with publishing(warehouse):  # one publish at the end (the full publish is measured on its own)
        pages = document_pages(documents)
        while batch := list(itertools.islice(pages, PAGES_PER_WRITE)):
            _write_pages(warehouse, batch)
            segments.write(spooled_journeys(batch))
        segments.close()
        report = load_events(warehouse, spool, YEAR_LOAD)
    shutil.rmtree(spool)  # its segments, archived once loaded: the minute's deliveries go to a new spool
    if report.loaded != segments.records:
        raise RuntimeError(f"loaded {report.loaded} of {segments.records} deliveries: {report}")
    return report.loaded, time.perf_counter() - started


def _built(documents: int, warehouse: Path) -> tuple[int, float]:
    """Build the warehouse into `warehouse`'s folder, or copy it from the cache; unpublished."""
    cache = os.environ.get("SHIPSYNC_BENCH_CACHE")
    kept = Path(cache) / f"publish-{documents}" if cache else None
    if kept is not None and (kept / BUILT).exists():
        shutil.copytree(kept, warehouse.parent)
        built = orjson.loads((kept / BUILT).read_bytes())
        return int(built["events"]), float(built["seconds"])
    events, seconds = _build(documents, warehouse)
    shutil.rmtree(publication_dir(warehouse))
    analysts_file(warehouse).unlink()
    if kept is not None:
        shutil.copytree(warehouse.parent, kept, dirs_exist_ok=True)
        (kept / BUILT).write_bytes(orjson.dumps({"events": events, "seconds": seconds}))
    return events, seconds


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
    segments = SegmentWriter(spool)
    segments.write(records)
    segments.close()
    return wanted


def publish_cost(documents: int) -> list[BenchResult]:
    with tempfile.TemporaryDirectory(prefix="shipsync-bench-") as tmp:
        warehouse = Path(tmp) / "warehouse" / "shipsync.duckdb"
        events, build = _built(documents, warehouse)
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
