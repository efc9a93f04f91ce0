"""Publish cost beside the run it follows, at N documents with a year of webhook events.

The warehouse is built as the pipeline builds it: document pages through `write_batch`, and a year
of the sandbox's simulated container journeys (`journey_year`) through the spool and `events load`
(in batches of 64 MB: the year's load is a build step, not what is measured, and the default 4 MB
batches take twice as long at this size). Then it is published in full. Then five minutes'
deliveries (the year's rate per minute, at least 10, new notifications each minute) are loaded with
`events load` one minute after the other, each followed by its publish, after a first such minute
that is not counted (its load reads the file cold): the figure is the five publishes' time over the
five loads'.

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
from shipsync.warehouse.layout import analysts_file, publication_dir
from shipsync.warehouse.publish import publish
from shipsync.warehouse.publishing import last_report, publishing

from shipsync.warehouse.declared_rows import observed_now
from shipsync.warehouse.load import write_batch
from shipsync.warehouse.normalize import document_page_columns
from shipsync.webhooks.load import load_events
from shipsync.webhooks.spool import SpoolSizes
from shipsync_bench.journey_year import SegmentWriter, spooled_journeys
from shipsync_bench.results import BenchResult, at_most
from shipsync_sandbox.stream import document_pages

MINUTES_PER_YEAR = 365 * 24 * 60
# Minutes measured one after the other, summed: one minute's publish and load each take 0.1-0.5 s
# here, the order of the machine's noise (the same minute measured 0.2-0.8 s from run to run).
MINUTES = 5
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
    # Every record is accounted for: loaded, or kept as a conflict (the generator sends a few events
    # twice with different bodies at 100,000 documents: 92 of 2,152,820), as the loader keeps any.
    if report.loaded + report.conflicts != segments.records:
        raise RuntimeError(f"loaded {report.loaded} and {report.conflicts} conflicts of {segments.records} deliveries")
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


def _minute(events_per_year: int, spool: Path, documents: int, minute: int) -> int:
    """Minute `minute`'s deliveries at the year's rate (at least 10), as new notifications."""
    wanted = max(10, round(events_per_year / MINUTES_PER_YEAR))
    pages = document_pages(min(documents, 100), seed=99 + minute)
    records = itertools.islice(spooled_journeys(pages, containers=wanted, seed=7 + minute), wanted)
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
        publishes, loads = [], []
        for minute in range(MINUTES + 1):
            spool = warehouse.parent / f"spool-{minute}"
            wanted = _minute(events, spool, documents, minute)
            started = time.perf_counter()
            report = load_events(warehouse, spool)  # as `events load` runs: the load, then its publish on the same connection
            whole = time.perf_counter() - started
            minute_publish = last_report(warehouse)
            if report.loaded != wanted or minute_publish is None or minute_publish.generation is None:
                raise RuntimeError(f"minute {minute}: loaded {report.loaded} of {wanted} notifications; published: {minute_publish}")
            if minute:  # the first minute's load reads the file cold (1-2 s against 0.3 s after): not counted
                publishes.append(minute_publish.seconds)
                loads.append(whole - minute_publish.seconds)
    label = f"{documents:,} documents + a year of events ({events:,}; pipeline file {size:,.0f} MB)"
    spread = f"each publish {min(publishes):.2f}-{max(publishes):.2f} s, each load {min(loads):.2f}-{max(loads):.2f} s"
    return [
        at_most(f"full publish, {label}", full.seconds, "s", f"building it ({build:.0f} s)", build, 0.25),
        at_most(
            f"publishes after {MINUTES} one-minute events loads in a row ({wanted} notifications each; {spread}), {label}",
            sum(publishes),
            "s",
            "those events loads",
            sum(loads),
            1.0,
        ),
    ]
