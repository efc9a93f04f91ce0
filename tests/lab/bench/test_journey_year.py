"""The publish bench's year of deliveries: the sandbox's journeys as its Deliverer sends them, in
segments that `events load` reads like a receiver's, every delivery loaded."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import orjson
import pytest

from shipsync.webhooks.framing import read_records
from shipsync.webhooks.load import load_events
from shipsync.webhooks.spool import segments
from shipsync_bench.journey_year import SegmentWriter, spooled_journeys
from shipsync_sandbox.stream import document_pages
from support.lake import location
from support.warehouse_rows import rows


@pytest.mark.slow
def test_a_year_of_journeys_spools_as_deliveries_and_loads_whole(tmp_path: Path) -> None:
    spool, warehouse = tmp_path / "spool", tmp_path / "w"
    year = SegmentWriter(spool, segment_bytes=1024 * 1024)
    year.write(spooled_journeys(document_pages(200)))  # two pages, which share a shipment
    year.close()
    written = segments(spool)
    assert len(written) > 3 and all(path.stat().st_size < 1024 * 1024 + 64 * 1024 for path in written)

    records = [record for path in written for record in read_records(path)]
    bodies = [orjson.loads(record.body) for record in records]
    assert len(records) == year.records > 1000
    kinds = {body["data"]["attributes"]["event"] for body in bodies}
    assert {"container.transport.vessel_departed", "container.updated", "shipment.estimated.arrival", "tracking_request.succeeded"} <= kinds
    for record, body in zip(records, bodies, strict=True):
        reference, first = body["data"]["relationships"]["reference_object"]["data"], body["included"][0]
        assert (first["type"], first["id"]) == (reference["type"], reference["id"])  # as the Deliverer sends it
        assert record.received_at.replace("+00:00", "Z") == body["data"]["attributes"]["created_at"]
    created = [datetime.fromisoformat(body["data"]["attributes"]["created_at"]) for body in bodies]
    assert max(created) - min(created) > timedelta(days=90)  # journeys spread over the months, not one instant

    report = load_events(location(warehouse), spool)
    assert (report.loaded, report.dead_letters) == (year.records, 0)
    (counts,) = rows(warehouse, "SELECT (SELECT count(*) FROM webhook_events) AS events, (SELECT count(*) FROM transport_events) AS moves")
    assert counts["events"] == year.records and counts["moves"] > 100  # the reference objects fill their tables

    minute = SegmentWriter(spool)  # a later writer's segments come after the year's, never under their names
    minute.write(spooled_journeys(document_pages(100, seed=99), containers=2))
    minute.close()
    (new,) = segments(spool)  # the year's were archived once loaded
    assert new.name > written[-1].name
    assert load_events(location(warehouse), spool).loaded == minute.records > 0
