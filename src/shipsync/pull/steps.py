"""How a pull runs its batches: directly, or (in a flow) each batch as one Prefect task.

A batch step fetches, then stages what it read in the run's warehouse (committed with the rest of
the run), and returns only a small `BatchOutcome`: a task's inputs and result stay tiny, so
Prefect's bookkeeping costs the same for 10 or 10,000 documents in a batch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from shipsync.api.jsonapi import ListingWalk
from shipsync.api.transport import ClientStats
from shipsync.config import Settings
from shipsync.pull.fetch import Fetched
from shipsync.warehouse.ledger import FlowName, RunRecord, WarehouseRun, warehouse_run

T = TypeVar("T")
R = TypeVar("R")
# What a run is called with besides its warehouse and settings, that is not one of its parameters.
_NOT_PARAMETERS = frozenset({"runner", "progress"})


class StepRunner(Protocol):
    def __call__(self, name: str, fn: Callable[..., T], /, *args: Any) -> T: ...


def run_direct(name: str, fn: Callable[..., T], /, *args: Any) -> T:
    return fn(*args)


Progress = Callable[[int], None]


def no_progress(advance: int) -> None:
    return None


@dataclass
class BatchOutcome:
    """What one batch did: client counters, what was read, missing or given up (what it changed in
    the warehouse is known when the run commits: the ledger's counts)."""

    stats: ClientStats = field(default_factory=ClientStats)
    not_found: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    fetched: int = 0
    next_link: str | None = None
    newest_stamp: str | None = None  # the newest stamp a listing walk read (its high-water mark)
    pages: int = 0  # listing pages read
    max_listing_pages: int | None = None  # the cap of the listing they are of (the settings')


def outcome_of(fetched: Fetched) -> BatchOutcome:
    return BatchOutcome(
        fetched.stats,
        fetched.not_found,
        fetched.failed,
        len(fetched.data),
        fetched.next_link,
        pages=fetched.pages,
        max_listing_pages=fetched.max_listing_pages,
    )


def absorb(record: RunRecord, outcome: BatchOutcome) -> None:
    record.add_stats(outcome.stats)
    record.not_found.extend(outcome.not_found)
    record.errors.extend(outcome.failed)


def page_through(
    record: RunRecord, runner: StepRunner, progress: Progress, name: str, batch: Callable[..., BatchOutcome], *args: Any
) -> list[BatchOutcome]:
    """Run `batch(*args, cursor)` as steps, following each outcome's `links.next` cursor to the end;
    a cursor that repeats, or a listing past its page cap, stops it (`ListingWalk`: each batch's
    client checks its own pages, this the listing's across batches)."""
    cursor: str | None = None
    outcomes = []
    walk = ListingWalk(name)
    while True:
        outcome = runner(name, batch, *args, cursor)
        absorb(record, outcome)
        progress(outcome.fetched)
        outcomes.append(outcome)
        cursor = outcome.next_link
        if cursor is None:
            return outcomes
        walk.max_pages = outcome.max_listing_pages or walk.max_pages
        walk.read(outcome.pages)
        walk.follow(cursor)


def in_own_run(settings: Settings, flow: FlowName, pull: Callable[..., R], /, **arguments: Any) -> R:
    """`pull(run, settings, **arguments)` as a run of its own: the warehouse opened once, and what it
    staged committed as one snapshot named `flow` (a missing API key fails before anything opens)."""
    settings.require_api_key()
    parameters = {k: v for k, v in arguments.items() if k not in _NOT_PARAMETERS}
    run: WarehouseRun
    with warehouse_run(settings.lake, flow, parameters, flow_run_id=settings.flow_run_id) as run:
        return pull(run, settings, **arguments)
