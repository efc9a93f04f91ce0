"""Replays cost next to nothing (issue 27, item 8): one captured delivery sent 300 times used to
leave 300 copies in the spool (287 MB at 985 KB each) and 299 redelivery rows. The receiver stores
a delivery it stored lately once; `events load` keeps one redelivery row per notification at most;
and the spool's archive is pruned by age and by size, never of a record not yet loaded."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import orjson
import pytest
from typer.testing import CliRunner

from shipsync.cli import app
from shipsync.webhooks.framing import encode_record, read_records
from shipsync.webhooks.http_limits import ConnectionGuard
from shipsync.webhooks.limits import ReceiverLimits
from shipsync.webhooks.load import load_events
from shipsync.webhooks.receiver import Receiver
from shipsync.webhooks.signature import sign
from shipsync.webhooks.spool import ArchiveRetention, segments
from shipsync.webhooks.writer import SpoolWriter
from shipsync_sandbox.serving import BackgroundServer
from support.lake import location
from support.warehouse_rows import rows

SECRET = "whsec-replays-test-0001"


def captured(notification_id: str, padding: int = 100_000) -> bytes:
    data = {"id": notification_id, "type": "webhook_notification", "attributes": {"event": "container.updated"}}
    return orjson.dumps({"data": data, "included": [], "padding": "p" * padding})


@pytest.fixture
def receiver(tmp_path: Path) -> Iterator[tuple[str, SpoolWriter]]:
    writer = SpoolWriter(tmp_path / "spool")
    limits = ReceiverLimits()
    with BackgroundServer(**ConnectionGuard(limits).uvicorn_settings(Receiver(writer, [SECRET], limits))) as server:
        yield server.url, writer
    writer.close()


def test_a_delivery_replayed_300_times_is_stored_once(receiver: tuple[str, SpoolWriter], tmp_path: Path) -> None:
    url, writer = receiver
    body = captured("replayed")
    headers = {"X-T49-Webhook-Signature": sign(SECRET, body)}

    async def replay() -> list[int]:
        async with httpx.AsyncClient() as client:
            together = await asyncio.gather(*(client.post(f"{url}/webhook", content=body, headers=headers) for _ in range(50)))
            one_by_one = [await client.post(f"{url}/webhook", content=body, headers=headers) for _ in range(250)]
        return [response.status_code for response in [*together, *one_by_one]]

    assert asyncio.run(replay()) == [200] * 300  # the ones sent with the first waited for its sync
    other = captured("another")
    assert httpx.post(f"{url}/webhook", content=other, headers={"X-T49-Webhook-Signature": sign(SECRET, other)}).status_code == 200
    assert [r.body for path in segments(writer.spool) for r in read_records(path)] == [body, other]
    report = load_events(location(tmp_path / "w"), writer.spool)
    assert (report.loaded, report.duplicates) == (2, 0)


def spool_of(spool: Path, bodies: list[bytes], name: str) -> Path:
    spool.mkdir(mode=0o700, exist_ok=True)
    path = spool / name
    path.write_bytes(b"".join(encode_record(body, 0, received_at_ns=1_780_000_000_000_000_000 + n * 1000) for n, body in enumerate(bodies)))
    return path


def test_replays_that_reach_the_spool_cost_one_redelivery_row(tmp_path: Path) -> None:
    """Copies written again (after a receiver restarted, or past its memory of recent deliveries)."""
    spool, warehouse = tmp_path / "spool", tmp_path / "w"
    body = captured("replayed", padding=10)
    spool_of(spool, [body] * 300, "segment-00000000000000000001-1.spool")
    report = load_events(location(warehouse), spool)
    assert (report.loaded, report.duplicates) == (1, 299)
    spool_of(spool, [body] * 20 + [captured("once", padding=10)], "segment-00000000000000000002-1.spool")
    assert load_events(location(warehouse), spool).duplicates == 20
    (redelivery,) = rows(warehouse, "SELECT notification_id, received_at FROM webhook_redeliveries")
    (event,) = rows(warehouse, "SELECT received_at FROM webhook_events WHERE notification_id = 'replayed'")
    assert redelivery["notification_id"] == "replayed" and redelivery["received_at"] > event["received_at"]  # when it first came again
    # A load of repeats only (nothing new to insert or refresh) counts them and writes nothing else.
    spool_of(spool, [body] * 5, "segment-00000000000000000003-1.spool")
    only_repeats = load_events(location(warehouse), spool)
    assert (only_repeats.loaded, only_repeats.duplicates, only_repeats.entities_refreshed) == (0, 5, 0)
    assert len(rows(warehouse, "SELECT notification_id FROM webhook_redeliveries")) == 1
    assert len(rows(warehouse, "SELECT notification_id FROM webhook_events")) == 2


def archived_spool(tmp_path: Path, count: int) -> tuple[Path, Path]:
    """`count` loaded and archived segments of ~100 KB, the n-th last written n days ago."""
    spool, warehouse = tmp_path / "spool", tmp_path / "w"
    for n in range(count):
        spool_of(spool, [captured(f"n-{n}")], f"segment-{n:020d}-1.spool")
    report = load_events(location(warehouse), spool, retention=ArchiveRetention(days=1000, megabytes=1000))
    assert len(report.archived) == count and report.pruned == []
    now = time.time()
    for n in range(count):
        os.utime(spool / "archive" / f"segment-{n:020d}-1.spool", (now, now - (count - n) * 86_400))
    return spool, warehouse


@pytest.mark.slow
def test_the_archive_is_pruned_by_age_then_by_size(tmp_path: Path) -> None:
    spool, warehouse = archived_spool(tmp_path, 10)  # 10 to 1 days old
    report = load_events(location(warehouse), spool, retention=ArchiveRetention(days=7.5, megabytes=1000))
    assert report.pruned == [f"segment-{n:020d}-1.spool" for n in range(3)]  # 10, 9 and 8 days old
    report = load_events(location(warehouse), spool, retention=ArchiveRetention(days=7.5, megabytes=0.35))
    assert report.pruned == [f"segment-{n:020d}-1.spool" for n in range(3, 7)]  # the oldest, down to 3 x 100 KB
    assert sorted(p.name for p in (spool / "archive").iterdir()) == [f"segment-{n:020d}-1.spool" for n in range(7, 10)]
    assert rows(warehouse, "SELECT count(*) AS n FROM webhook_events") == [{"n": 10}]  # pruning touches the spool only


def test_an_archived_segment_with_a_record_not_loaded_is_never_pruned(tmp_path: Path) -> None:
    spool, warehouse = archived_spool(tmp_path, 2)
    kept = spool / "archive" / "segment-00000000000000000000-1.spool"
    with kept.open("ab") as segment:  # a record written after its checkpoint (as no receiver does)
        segment.write(encode_record(captured("late"), 0))
    os.utime(kept, (0, 0))
    report = load_events(location(warehouse), spool, retention=ArchiveRetention(days=0, megabytes=0))
    assert report.pruned == ["segment-00000000000000000001-1.spool"] and kept.exists()


def test_events_load_prunes_with_the_settings(tmp_path: Path) -> None:
    spool, warehouse = archived_spool(tmp_path, 3)
    env = {"SHIPSYNC_WAREHOUSE": str(warehouse), "SHIPSYNC_SPOOL": str(spool), "COLUMNS": "300"}
    result = CliRunner().invoke(app, ["events", "load"], env={**env, "SHIPSYNC_SPOOL_ARCHIVE_DAYS": "2.5"})
    assert result.exit_code == 0 and "1 pruned from the archive" in result.output, result.output
    result = CliRunner().invoke(app, ["events", "load"], env={**env, "SHIPSYNC_SPOOL_ARCHIVE_MB": "0.15"})
    assert result.exit_code == 0 and "1 pruned from the archive" in result.output, result.output
    assert [p.name for p in (spool / "archive").iterdir()] == ["segment-00000000000000000002-1.spool"]
