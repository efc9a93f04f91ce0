"""How a pull runs its batches: directly, or (in a flow) each batch as one Prefect task.

A batch step fetches, then writes, and returns only a small `BatchOutcome`: a task's inputs and
result stay tiny, so Prefect's bookkeeping costs the same for 10 or 10,000 documents in a batch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from shipsync.api.transport import ClientStats
from shipsync.pull.fetch import Fetched
from shipsync.warehouse.ledger import RunRecord
from shipsync.warehouse.load import add_counts
from shipsync.warehouse.upsert import TableCounts

T = TypeVar("T")


class StepRunner(Protocol):
    def __call__(self, name: str, fn: Callable[..., T], /, *args: Any) -> T: ...


def run_direct(name: str, fn: Callable[..., T], /, *args: Any) -> T:
    return fn(*args)


Progress = Callable[[int], None]


def no_progress(advance: int) -> None:
    return None


@dataclass
class BatchOutcome:
    """What one batch did: counts per table, client counters, what was missing or given up."""

    counts: dict[str, TableCounts] = field(default_factory=dict)
    stats: ClientStats = field(default_factory=ClientStats)
    not_found: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    fetched: int = 0
    next_link: str | None = None
    newest_stamp: str | None = None  # the newest stamp a listing walk read (its high-water mark)


def outcome_of(fetched: Fetched, counts: dict[str, TableCounts]) -> BatchOutcome:
    return BatchOutcome(counts, fetched.stats, fetched.not_found, fetched.failed, len(fetched.data), fetched.next_link)


def absorb(record: RunRecord, outcome: BatchOutcome) -> None:
    record.add_stats(outcome.stats)
    record.not_found.extend(outcome.not_found)
    record.errors.extend(outcome.failed)
    add_counts(record.counts, outcome.counts)


def page_through(
    record: RunRecord, runner: StepRunner, progress: Progress, name: str, batch: Callable[..., BatchOutcome], *args: Any
) -> list[BatchOutcome]:
    """Run `batch(*args, cursor, run_id)` as steps, following each outcome's `links.next` cursor to the end."""
    cursor: str | None = None
    outcomes = []
    while True:
        outcome = runner(name, batch, *args, cursor, record.run_id)
        absorb(record, outcome)
        progress(outcome.fetched)
        outcomes.append(outcome)
        cursor = outcome.next_link
        if cursor is None:
            return outcomes
