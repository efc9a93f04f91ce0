"""Incremental pulls against the sandbox over HTTP, into a real DuckDB file: new documents
by `sort=-created_at` down to the last run's mark, a re-read of the recent window, the full pass for
older changes, and a mark that only a successful run moves."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import httpx
import pytest

from shipsync.pull.documents import FLOW, pull_documents
from shipsync.pull.listing_marks import MARK
from shipsync.pull.tracking import pull_containers, pull_shipments
from shipsync.warehouse.ledger import last_success_parameter
from shipsync_sandbox.document_store import DocumentStore
from support.lake import analyst
from support.sandboxes import K1, RunningSandbox, SandboxFactory, settings_for
from support.warehouse_rows import count

pytestmark = pytest.mark.slow  # several pulls each, over HTTP

SEEDED = 250


@pytest.fixture
def sandbox(make_sandbox: SandboxFactory) -> RunningSandbox:
    return make_sandbox(documents=SEEDED)


def store_of(sandbox: RunningSandbox) -> DocumentStore:
    store = sandbox.state.world.accounts[K1].documents
    assert isinstance(store, DocumentStore)
    return store


def add_documents(sandbox: RunningSandbox, n: int) -> None:
    """New documents through the sandbox's admin route (created after every existing one)."""
    response = httpx.post(f"{sandbox.server.url}/_admin/advance?documents={n}", headers={"Authorization": f"Token {K1}"})
    assert response.raise_for_status().json()["new_documents"] == n


def test_first_run_reads_all_then_only_what_is_new(sandbox: RunningSandbox, warehouse: Path) -> None:
    settings = settings_for(sandbox, warehouse)
    first = pull_documents(settings)
    assert first.counts["documents"].inserted == SEEDED and first.stats.requests == math.ceil(SEEDED / 100)
    newest = store_of(sandbox).in_order("newest")[0]["attributes"]["created_at"]
    assert mark_of(warehouse) == newest.replace("Z", "+00:00")

    again = pull_documents(settings)
    assert again.stats.requests == 1 and again.counts["documents"].inserted == 0

    add_documents(sandbox, 130)
    third = pull_documents(settings)
    # The new documents, plus the re-check window's few: one page per 100, at most one more.
    assert third.counts["documents"].inserted == 130
    assert math.ceil(130 / 100) <= third.stats.requests <= math.ceil(130 / 100) + 1
    assert count(warehouse, "SELECT count(*) FROM documents") == SEEDED + 130


def test_a_change_inside_the_window_is_reread_one_outside_waits_for_the_full_pass(sandbox: RunningSandbox, warehouse: Path) -> None:
    settings = settings_for(sandbox, warehouse, document_recheck_days=3)
    pull_documents(settings)
    store = store_of(sandbox)
    clock = sandbox.state.world.accounts[K1].clock
    store.touch(store.count - 1, clock)  # the newest document: inside the window
    store.touch(0, clock)  # the oldest: created months before the mark
    incremental = pull_documents(settings)
    assert incremental.counts["documents"].updated == 1
    stamp = clock.strftime("%Y-%m-%dT%H:%M:%S")
    changed = f"SELECT count(*) FROM documents WHERE strftime(updated_at AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%S') = '{stamp}'"
    assert count(warehouse, changed) == 1
    full = pull_documents(settings, all_documents=True)
    assert full.counts["documents"].updated == 1 and full.stats.requests == math.ceil(SEEDED / 100)
    assert count(warehouse, changed) == 2


def test_a_failed_run_leaves_the_mark_where_it_was(sandbox: RunningSandbox, warehouse: Path) -> None:
    settings = settings_for(sandbox, warehouse, max_retries=0)
    pull_documents(settings)
    mark = mark_of(warehouse)
    add_documents(sandbox, 40)
    options = sandbox.state.options
    sandbox.state.options = dataclasses.replace(options, fault_rate=1.0)
    with pytest.raises(Exception):  # noqa: B017 - whichever fault the sandbox drew
        pull_documents(settings)
    sandbox.state.options = options
    assert count(warehouse, "SELECT count(*) FROM sync_runs WHERE status = 'failed'") == 1
    assert mark_of(warehouse) == mark
    after = pull_documents(settings)
    assert after.counts["documents"].inserted == 40
    assert mark_of(warehouse) != mark


def test_shipments_and_containers_walk_down_to_their_marks_and_miss_nothing(sandbox: RunningSandbox, warehouse: Path) -> None:
    """The containers' listing is most recently refreshed first and the shipments' newest first: an
    incremental walk stops at the last run's mark, and a full pass after it finds nothing new."""
    settings = settings_for(sandbox, warehouse)
    pull_shipments(settings)  # the full passes leave the marks
    pull_containers(settings)
    first = [pull_shipments(settings, incremental=True), pull_containers(settings, incremental=True)]
    assert all(r.parameters["down_to"] for r in first)  # the full passes left their marks
    assert [r.stats.requests for r in first] == [1, 1]  # a page each, no events read: nothing changed
    assert sum(c.inserted + c.updated for r in first for c in r.counts.values()) == 0

    response = httpx.post(f"{sandbox.server.url}/_admin/advance?containers=5", headers={"Authorization": f"Token {K1}"})
    assert response.raise_for_status().json()["containers"] == 5
    events_before = count(warehouse, "SELECT count(*) FROM transport_events")
    walked = pull_containers(settings, incremental=True)
    # One listing page (the moved boxes are the most recently refreshed), and one events read per
    # moved box: the others on the page are as the warehouse holds them.
    assert walked.stats.requests == 1 + 5
    assert count(warehouse, "SELECT count(*) FROM transport_events") > events_before  # the moved boxes' new milestones
    after = [pull_shipments(settings), pull_containers(settings)]
    changed = {(r.flow, t): c.inserted + c.updated for r in after for t, c in r.counts.items() if c.inserted + c.updated}
    assert not changed, changed


def mark_of(warehouse: Path) -> str | None:
    with analyst(warehouse) as con:
        return last_success_parameter(con, FLOW, MARK)  # type: ignore[arg-type]
