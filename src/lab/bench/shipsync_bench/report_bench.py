"""How long `shipsync report` takes on a big warehouse: 100,000 documents and a year of events.

The warehouse is seeded through shipsync's own loaders: the document pages the sandbox serves go
through the pull's normalize-and-upsert path (their shipments and containers into the typed
tables), a year of webhook notifications through the spool and `events load`, and a year of run
ledger rows (a tracking-request pull every hour, a full pull every day) straight into `sync_runs`.
The figure is the best of three builds in this process, after one that loads the fonts; their CPU
time and the CLI's time (Python start and imports included) are given beside it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from datetime import datetime, timedelta
from itertools import islice
from pathlib import Path

import duckdb
import orjson

from shipsync.report import build_report
from shipsync.warehouse.unit_of_work import CommitMessage, open_warehouse
from shipsync.warehouse_location import LakeLocation, lake_location
from shipsync.webhooks.framing import encode_record
from shipsync.webhooks.load import load_events
from shipsync_bench.journey_year import SegmentWriter
from shipsync_bench.load_bench import run_path, write_pages
from shipsync_bench.results import BenchResult, under
from shipsync_sandbox.timeline import REFERENCE_START

DAYS = 365
KINDS = (
    "container.transport.vessel_loaded",
    "container.transport.vessel_departed",
    "container.transport.vessel_arrived",
    "container.transport.vessel_discharged",
    "container.transport.available",
    "container.transport.full_out",
    "container.transport.empty_in",
    "container.updated",
    "shipment.estimated.arrival",
    "container.pickup_lfd.changed",
    "tracking_request.succeeded",
)


def notification(n: int, at: datetime) -> bytes:
    stamp = at.strftime("%Y-%m-%dT%H:%M:%SZ")
    event = KINDS[(n * 7919) % len(KINDS)]
    return orjson.dumps(
        {
            "data": {
                "id": f"report-bench-{n}",
                "type": "webhook_notification",
                "attributes": {"event": event, "delivery_status": "succeeded", "created_at": stamp},
                "relationships": {"reference_object": {"data": {"id": f"te-{n}", "type": "transport_event"}}},
            },
            "included": [
                {
                    "id": f"te-{n}",
                    "type": "transport_event",
                    "attributes": {"event": event, "timestamp": stamp, "location_locode": "USLAX", "created_at": stamp},
                }
            ],
        }
    )


def _spool_a_year(spool: Path, events: int, as_of: datetime) -> None:
    step = timedelta(days=DAYS) / events
    since = as_of - timedelta(days=DAYS)
    moments = (since + step * n for n in range(events))
    spool_records(spool, (encode_record(notification(n, at), 0, int(at.timestamp() * 1e9)) for n, at in enumerate(moments)))


def _ledger_of_a_year(warehouse: Path, as_of: datetime) -> None:
    """An hourly tracking-request pull and a daily full pull, for a year (written as one run)."""
    bounds = [as_of - timedelta(days=DAYS), as_of, as_of - timedelta(days=DAYS), as_of]
    with open_warehouse(lake_location(str(warehouse))) as lake:

        def ledger(con: duckdb.DuckDBPyConnection, commit: object) -> None:
            con.execute(LEDGER_OF_A_YEAR, bounds)

        lake.defer(["sync_runs"], ledger)
        lake.commit(CommitMessage("bench", "ledger-of-a-year"))


LEDGER_OF_A_YEAR = """
            INSERT INTO sync_runs (run_id, flow, started_at, finished_at, status, requests, throttled, retries, table_counts)
            SELECT 'bench-' || flow || '-' || epoch(moment), flow, moment, moment + INTERVAL 40 SECOND,
                   CASE WHEN hash(moment) % 97 = 0 THEN 'failed'
                        WHEN hash(moment) % 31 = 0 THEN 'completed_with_errors' ELSE 'completed' END,
                   CASE flow WHEN 'pull_all' THEN 900 ELSE 12 END,
                   CAST(hash(moment) % 13 = 0 AS INTEGER), CAST(hash(moment) % 5 AS INTEGER), '{}'
            FROM (
                SELECT 'pull_tracking_requests' AS flow, unnest(generate_series(?::TIMESTAMPTZ, ?::TIMESTAMPTZ, INTERVAL 1 HOUR)) AS moment
                UNION ALL
                SELECT 'pull_all', unnest(generate_series(?::TIMESTAMPTZ, ?::TIMESTAMPTZ, INTERVAL 1 DAY))
            )
"""


def spool_records(spool: Path, records: Iterable[bytes]) -> int:
    """Spool records as a receiver's segments; how many."""
    segments = SegmentWriter(spool)
    segments.write(records)
    segments.close()
    return segments.records


def seed(root: Path, documents: int, events: int, as_of: datetime, *, deliveries: Iterator[bytes] | None = None) -> LakeLocation:
    """A lake of `documents` documents, `events` notifications and a year of run ledger. The
    notifications are the next `events` spool records of `deliveries` (e.g. `spooled_journeys`), or
    else spread evenly over the year up to `as_of`, one kind each, naming a transport event only."""
    warehouse = root / "warehouse"
    pages = root / "pages.ndjson"
    write_pages(pages, documents)
    loaded = run_path("shipsync", pages, warehouse)
    if loaded["documents"] != documents:
        raise RuntimeError(f"seeded {loaded['documents']} of {documents} documents")
    pages.unlink()
    if deliveries is None:
        _spool_a_year(root / "spool", events, as_of)
        spooled = events
    else:
        spooled = spool_records(root / "spool", islice(deliveries, events))
    report = load_events(lake_location(str(warehouse)), root / "spool")
    if report.loaded != spooled:
        raise RuntimeError(f"loaded {report.loaded} of {spooled} events")
    _ledger_of_a_year(warehouse, as_of)
    return lake_location(str(warehouse))


def report_build(documents: int = 100_000, events: int = 300_000, rounds: int = 3) -> list[BenchResult]:
    # The streamed pages are a world that starts at REFERENCE_START: a year up to a little after it
    # holds every journey.
    as_of = REFERENCE_START + timedelta(days=30)
    with tempfile.TemporaryDirectory(prefix="shipsync-bench-") as tmp:
        root = Path(tmp)
        warehouse = seed(root, documents, events, as_of)
        output = root / "report.html"
        first = build_report(warehouse, output, days=DAYS, as_of=as_of, spool=root / "spool")
        if first.drawn < len(first.outcomes) - 1:  # all but the quarantine chart (nothing quarantined)
            raise RuntimeError(f"only {first.drawn} of {len(first.outcomes)} charts drawn on the seeded warehouse")
        walls, cpus = [], []
        for _ in range(rounds):
            cpu = time.process_time()
            walls.append(build_report(warehouse, output, days=DAYS, as_of=as_of, spool=root / "spool").seconds)
            cpus.append(time.process_time() - cpu)
        started = time.perf_counter()
        env = {**os.environ, "SHIPSYNC_WAREHOUSE": str(root / "warehouse"), "PREFECT_SERVER_ANALYTICS_ENABLED": "false"}
        subprocess.run(
            [sys.executable, "-m", "shipsync", "report", "--output", str(output), "--days", str(DAYS), "--as-of", as_of.isoformat()],
            check=True,
            capture_output=True,
            env=env,
        )
        command = time.perf_counter() - started
    label = f"{documents:,} documents, {events:,} events in a year"
    return [
        under(f"report build ({label}; best of {rounds})", min(walls), "s", 3.0),
        # CPU seconds of this process and DuckDB's threads: what the build costs on a machine that
        # others do not share, where wall time follows it (context for a busy machine's figure).
        BenchResult(f"report build CPU time ({label}; best of {rounds})", min(cpus), "s", "-", None, None, "(context)", True),
        BenchResult(f"shipsync report command, Python start included ({label})", command, "s", "-", None, None, "(context)", True),
    ]
