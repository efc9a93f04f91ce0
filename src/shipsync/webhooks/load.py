"""`events load`: the spool into the event log, exactly once, and never stopped by one record.

Records are read in batches bounded by count and by bytes (`SpoolSizes`), so memory stays flat
whatever the bodies. Each batch is written in one transaction together with its spool checkpoint,
so a crash at any point leaves either the batch and its checkpoint or neither. A notification id
seen before is skipped (the same body) or kept as a conflict (a different body).

Dead letters: a record that is not a notification, or that the warehouse refuses, goes to
`webhook_dead_letters` with the reason and its body as delivered, and the checkpoint moves past it.
When a batch fails on its data, it is split in halves and each is loaded on its own, down to the
one record at fault: the records around it load as if it were not there. Consumed segments nobody
holds any more are archived, and the archive is pruned by age and size (`ArchiveRetention`), of
segments every record of which is loaded only.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from shipsync.warehouse import changes
from shipsync.warehouse.connection import connect, transaction
from shipsync.webhooks.framing import SpoolRecord, read_records
from shipsync.webhooks.load_entities import refresh_entities
from shipsync.webhooks.load_steps import (
    DeadLetter,
    dedupe,
    insert_conflicts,
    insert_dead_letters,
    insert_events,
    insert_redeliveries,
    insert_resources,
    parse_records,
    save_checkpoints,
)
from shipsync.webhooks.notification import parse_notification
from shipsync.webhooks.spool import ArchiveRetention, SpoolFolder, SpoolSizes, is_finished, segments

log = logging.getLogger("shipsync.webhooks")
# Failures of a record's data, not of the machine: the warehouse refusing a value, or a shape no
# step foresaw. Anything else (a full disk, a lock) stops the load with the batch rolled back.
DATA_ERRORS = (duckdb.DataError, duckdb.InvalidInputException, ValueError, TypeError, AttributeError, KeyError, IndexError, RecursionError)


@dataclass
class LoadReport:
    loaded: int = 0
    duplicates: int = 0
    conflicts: int = 0
    dead_letters: int = 0
    entities_refreshed: int = 0
    stale_ignored: int = 0
    archived: list[str] = field(default_factory=list)
    pruned: list[str] = field(default_factory=list)

    def add(self, other: LoadReport) -> None:
        for name in ("loaded", "duplicates", "conflicts", "dead_letters", "entities_refreshed", "stale_ignored"):
            setattr(self, name, getattr(self, name) + getattr(other, name))


@dataclass
class Batch:
    records: list[SpoolRecord]

    @property
    def progress(self) -> dict[str, int]:
        """Where each segment's checkpoint moves once this batch is in: past its last record."""
        return {record.segment: record.end_offset for record in self.records}

    def halves(self) -> tuple[Batch, Batch]:
        middle = len(self.records) // 2
        return Batch(self.records[:middle]), Batch(self.records[middle:])


def read_batches(spool: Path, checkpoints: dict[str, int], sizes: SpoolSizes) -> Iterator[Batch]:
    records: list[SpoolRecord] = []
    size = 0
    for path in segments(spool):
        for record in read_records(path, checkpoints.get(path.name, 0)):
            records.append(record)
            size += len(record.body)
            if len(records) >= sizes.load_records or size >= sizes.load_bytes:
                yield Batch(records)
                records, size = [], 0
    if records:
        yield Batch(records)


def write_batch(con: duckdb.DuckDBPyConnection, batch: Batch) -> LoadReport:
    """Every step of one batch, on an open transaction; what it did."""
    now = datetime.now(UTC)
    parsed, dead = parse_records(batch.records, now)
    fresh, repeats, conflicts = dedupe(con, parsed)
    insert_events(con, fresh, now)
    insert_resources(con, fresh)
    refreshed, stale = refresh_entities(con, fresh, now)
    insert_conflicts(con, conflicts, now)
    insert_redeliveries(con, repeats, now)
    insert_dead_letters(con, dead, now)
    save_checkpoints(con, batch.progress, now)
    _record_changes(con, fresh=bool(fresh), conflicts=bool(conflicts), repeats=bool(repeats), dead=bool(dead), progress=batch.progress)
    return LoadReport(len(fresh), len(repeats), len(conflicts), len(dead), refreshed, stale)


def _record_changes(
    con: duckdb.DuckDBPyConnection, *, fresh: bool, conflicts: bool, dead: bool, progress: dict[str, int], repeats: bool = False
) -> None:
    """Tell the publisher what this batch wrote with its own SQL (upserts log their own rows)."""
    if fresh:
        changes.record(con, "webhook_events", changes.APPENDED)
        changes.record(con, "webhook_event_resources", changes.APPENDED)
    if conflicts:
        changes.record(con, "webhook_event_conflicts", changes.APPENDED)
    if repeats:
        changes.record(con, "webhook_redeliveries", changes.APPENDED)
    if dead:
        changes.record(con, "webhook_dead_letters", changes.APPENDED)
    if progress:
        changes.record_rows(con, "webhook_spool_checkpoints", "SELECT unnest(?::VARCHAR[]) AS segment", [list(progress)])


def _dead_letter(con: duckdb.DuckDBPyConnection, record: SpoolRecord, error: Exception) -> LoadReport:
    """The record a step failed on, kept with the error; only its id is read again (parsing, which
    refuses what cannot be written again, cannot fail here)."""
    notification = parse_notification(record.body)
    reason = f"cannot be loaded: {type(error).__name__}: {error}"
    log.warning("events load: spool record %s@%d dead-lettered: %s", record.segment, record.end_offset, reason)
    now = datetime.now(UTC)
    insert_dead_letters(con, [DeadLetter(record, reason, None if isinstance(notification, str) else notification.id)], now)
    save_checkpoints(con, Batch([record]).progress, now)
    _record_changes(con, fresh=False, conflicts=False, dead=True, progress=Batch([record]).progress)
    return LoadReport(dead_letters=1)


def load_batch(con: duckdb.DuckDBPyConnection, batch: Batch, report: LoadReport) -> None:
    """Load a batch in one transaction; on a data failure, its halves one by one, down to the
    one record at fault, which becomes a dead letter."""
    try:
        with transaction(con):
            done = write_batch(con, batch)
    except DATA_ERRORS as error:
        if len(batch.records) > 1:
            for half in batch.halves():
                load_batch(con, half, report)
            return
        with transaction(con):
            done = _dead_letter(con, batch.records[0], error)
    report.add(done)


def load_events(warehouse: Path, spool: Path, sizes: SpoolSizes | None = None, retention: ArchiveRetention | None = None) -> LoadReport:
    """Load everything new in the spool; safe to run at any time, and again after any crash."""
    report = LoadReport()
    if not spool.exists():
        return report
    folder = SpoolFolder(spool)  # checks the folder is ours before trusting what is in it
    try:
        with connect(warehouse, records_changes=True) as con:  # every write below is logged for publishing
            checkpoints: dict[str, int] = dict(con.execute('SELECT segment, "offset" FROM webhook_spool_checkpoints').fetchall())
            for batch in read_batches(spool, checkpoints, sizes or SpoolSizes()):
                load_batch(con, batch, report)
                checkpoints.update(batch.progress)
        report.archived = archive_consumed(folder, checkpoints)
        report.pruned = prune_archive(folder, checkpoints, retention or ArchiveRetention(), time.time())
    finally:
        folder.close()
    return report


def consumed(path: Path, checkpoints: dict[str, int]) -> bool:
    """Every complete record of the segment is loaded: anything past its checkpoint is a record
    cut by a crash, never acknowledged."""
    return not any(True for _ in read_records(path, checkpoints.get(path.name, 0)))


def archive_consumed(folder: SpoolFolder, checkpoints: dict[str, int]) -> list[str]:
    """Move loaded segments that no receiver holds any more to `archive/`."""
    done = [path.name for path in segments(folder.path) if is_finished(path) and consumed(path, checkpoints)]
    folder.archive(done)
    return done


def prune_archive(folder: SpoolFolder, checkpoints: dict[str, int], retention: ArchiveRetention, now: float) -> list[str]:
    """Remove archived segments older than the retention's days, then the oldest while the archive
    holds more than its megabytes; never one with a record not yet loaded (none should be there:
    this checks again)."""
    archived = folder.archived()
    left = sum(segment.size for segment in archived)
    pruned = []
    for segment in archived:  # oldest first
        if now - segment.modified <= retention.days * 86_400 and left <= retention.megabytes * 1024 * 1024:
            break
        if consumed(folder.path / "archive" / segment.name, checkpoints):
            pruned.append(segment.name)
            left -= segment.size
    folder.remove_archived(pruned)
    return pruned
