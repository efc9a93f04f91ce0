"""`events load`: the spool into the event log, exactly once, and never stopped by one record.

A load is one run: what it reads is staged batch by batch and committed as one snapshot, with the
spool checkpoints that say how far it got (see `event_log`), so a crash at any point leaves either
the load and its checkpoints or neither. Records are read in batches bounded by count and by bytes
(`SpoolSizes`), so memory stays flat whatever the bodies.

Dead letters: a record that is not a notification, or that the warehouse would refuse, goes to
`webhook_dead_letters` with the reason and its body as delivered, and the checkpoint moves past it.
When a batch fails on its data, it is split in halves and each is staged on its own, down to the
one record at fault: the records around it load as if it were not there (`event_log.stage_copies`). Consumed segments nobody
holds any more are archived once the load is committed, and the archive is pruned by age and size
(`ArchiveRetention`), of segments every record of which is loaded only.

Checkpoints and dead letters name a segment by the spool's own id and the segment's name, so that
receivers on several hosts, each with its own spool, load into one lake side by side.

One load of a spool at a time: a load holds an exclusive `flock` on the spool's `load.lock` from
reading the checkpoints until its commit and archiving are done, and a second waits for it, then
reads the checkpoints the first committed. Two loads reading the same records would both stage
them, and the second's commit, replayed on the first's, would find every one of them known: a
false redelivery row for each.
"""

from __future__ import annotations

import fcntl
import logging
import os
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from shipsync.warehouse.ledger import RunRecord, warehouse_run
from shipsync.warehouse_location import LakeLocation
from shipsync.webhooks.event_log import EventLogStage, stage_copies
from shipsync.webhooks.framing import SpoolRecord, read_records
from shipsync.webhooks.load_steps import Copy
from shipsync.webhooks.spool import ArchiveRetention, SpoolFolder, SpoolSizes, is_finished, segments

log = logging.getLogger("shipsync.webhooks")
LOAD_LOCK_FILE = "load.lock"
DECLARED_REFRESH_EXCLUDED = frozenset(
    {"webhook_events", "webhook_event_resources", "webhook_event_conflicts", "webhook_redeliveries", "webhook_dead_letters"}
)


@dataclass
class LoadReport:
    loaded: int = 0
    duplicates: int = 0
    conflicts: int = 0
    dead_letters: int = 0
    entities_refreshed: int = 0
    stale_ignored: int = 0
    delivered_after_listing: int = 0  # notifications `events catch-up` had listed, now delivered
    archived: list[str] = field(default_factory=list)
    snapshot_id: int | None = None
    pruned: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, record: RunRecord) -> LoadReport:
        """What a committed load did, from its commit's counts."""
        counts = record.counts
        entities = [c for table, c in counts.items() if table not in DECLARED_REFRESH_EXCLUDED and table != "webhook_spool_checkpoints"]
        redeliveries = counts.get("webhook_redeliveries")
        events = counts.get("webhook_events")
        return cls(
            loaded=events.inserted if events else 0,
            duplicates=(redeliveries.inserted + redeliveries.unchanged) if redeliveries else 0,
            conflicts=counts["webhook_event_conflicts"].inserted if "webhook_event_conflicts" in counts else 0,
            dead_letters=counts["webhook_dead_letters"].inserted if "webhook_dead_letters" in counts else 0,
            entities_refreshed=sum(c.inserted + c.updated for c in entities),
            stale_ignored=sum(c.stale for c in entities),
            delivered_after_listing=events.updated if events else 0,
            snapshot_id=record.snapshot_id,
        )


def spool_progress(records: Sequence[Copy]) -> dict[str, int]:
    """Where each segment's checkpoint moves once these records are in: past its last one."""
    return {record.segment: record.end_offset for record in records}


@dataclass
class Batch:
    records: list[SpoolRecord]

    @property
    def progress(self) -> dict[str, int]:
        return spool_progress(self.records)


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


@contextmanager
def loading_alone(folder: SpoolFolder) -> Iterator[None]:
    """The spool's load lock, held for the block: waits while another load of this spool runs."""
    fd = os.open(LOAD_LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o600, dir_fd=folder.fd)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log.info("another events load of %s is running: waiting for it to finish", folder.path)
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def load_events(
    location: LakeLocation,
    spool: Path,
    sizes: SpoolSizes | None = None,
    *,
    retention: ArchiveRetention | None = None,
    flow_run_id: str | None = None,
) -> LoadReport:
    """Load everything new in the spool as one run; safe to run at any time, and again after any crash."""
    if not spool.exists():
        return LoadReport()
    folder = SpoolFolder(spool)  # checks the folder is ours before trusting what is in it
    try:
        with loading_alone(folder):
            return _load(location, folder, sizes, retention, flow_run_id)
    finally:
        folder.close()


def _load(
    location: LakeLocation, folder: SpoolFolder, sizes: SpoolSizes | None, retention: ArchiveRetention | None, flow_run_id: str | None
) -> LoadReport:
    own = folder.spool_id()
    parameters = {"spool": own}
    # Single-threaded: a minute's load reads and writes a few rows per statement, and a large
    # load's time is Python's parsing, which DuckDB's threads do not share.
    with (
        warehouse_run(location, "load_events", parameters, flow_run_id=flow_run_id, single_threaded=True) as run,
        run.step("load_events", parameters) as record,
    ):
        # A bare segment name is a checkpoint of a warehouse imported from the last layout (one
        # spool, whose segments were named alone): it is this spool's.
        checkpoints = {
            segment.split("/", 1)[-1]: int(offset)
            for segment, offset in run.con.execute(
                "SELECT segment, \"offset\" FROM webhook_spool_checkpoints WHERE starts_with(segment, ?) OR NOT contains(segment, '/')",
                [f"{own}/"],
            ).fetchall()
        }
        stage = EventLogStage(run.warehouse, datetime.now(UTC), own)
        for batch in read_batches(folder.path, checkpoints, sizes or SpoolSizes()):
            stage_copies(stage, batch.records, spool_progress)
            checkpoints.update(batch.progress)
    report = LoadReport.of(record)
    report.archived = archive_consumed(folder, checkpoints)
    report.pruned = prune_archive(folder, checkpoints, retention or ArchiveRetention(), time.time())
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
