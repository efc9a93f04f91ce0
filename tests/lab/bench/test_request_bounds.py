"""The request-bounds benchmark (issue 14) at a tiny size: its arithmetic, and that what it counts
at the sandbox is never below the bound it computes (a lower bound the client beats is wrong)."""

from __future__ import annotations

import pytest

from shipsync_bench.bounds_common import bounded, pages
from shipsync_bench.pull_bounds import daily_sync
from shipsync_bench.request_bounds import custom_fields


def test_pages_minutes_and_the_goal() -> None:
    assert [pages(n) for n in (0, 1, 100, 101, 100_000)] == [0, 1, 1, 2, 1000]
    within = bounded("job", 125, 100, "writes 100")
    assert within.passed and within.ratio == 1.25 and within.peer_figure == 100
    assert "125 requests = 1.2 min at 100/min (bound 100 = writes 100 = 1.0 min at 100/min)" in within.name
    assert not bounded("job", 126, 100, "writes 100").passed


@pytest.mark.slow
def test_custom_field_files_at_a_tiny_size() -> None:
    # 140 values: 7 fields on each of the first 20 containers, so 20 values (1 page) per field.
    small, first, again = custom_fields(140, 40, (5, 2), (10, 3))
    assert small.peer_figure == 2 + 5 * 2 and "reads min(all 2, per field 2, per entity 5) + writes 10" in small.name
    # The first file's 5 x 2 writes changed values (no new ones); the large file's 10 x 3 did too.
    assert first.peer_figure == 2 + 30 and "reads min(all 2, per field 3, per entity 10) + writes 30" in first.name
    assert again.peer_figure == 2 and "writes 0" in again.name
    assert all(r.figure >= r.peer_figure for r in (small, first, again))


@pytest.mark.slow
def test_pulls_at_a_tiny_size() -> None:
    backfill, rerun, polling, delivered = daily_sync(300, 200)  # 2 containers move each day
    assert "documents 3 + containers 2 + their events 200 + tracking requests" in backfill.name
    assert "nothing changed" in rerun.name and rerun.figure <= backfill.figure / 10
    assert "documents new or in the 3-day re-check window 1 + tracking requests 1 + shipments created 1" in polling.name
    assert "changed containers 0 (delivered)" in delivered.name
    assert delivered.figure < polling.figure  # the webhook feed spares the shipments and containers walks
    assert all(r.peer_figure and r.figure >= r.peer_figure for r in (backfill, polling, delivered))
