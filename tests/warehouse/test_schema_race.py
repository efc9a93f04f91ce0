"""Several processes opening a lake that does not exist yet, all at once: each makes or finds the
tables and goes on; none fails because another committed the same tables first."""

from __future__ import annotations

import multiprocessing
import sys
from multiprocessing.synchronize import Barrier
from pathlib import Path

import pytest

from support.waiting import HANG_S

WRITERS = 3


def open_and_write(folder: str, name: str, start: Barrier) -> None:
    from shipsync.warehouse.ledger import warehouse_run
    from shipsync.warehouse_location import lake_location

    location = lake_location(folder)
    start.wait(timeout=600)  # a hang guard; all at once: the tables do not exist yet for any of them
    with warehouse_run(location, "pull_all", {"writer": name}) as run, run.step("pull_all", {"writer": name}):
        insert = "INSERT INTO webhooks (id, url) VALUES (?, 'http://x')"
        run.warehouse.defer(["webhooks"], lambda con, commit: con.execute(insert, [name]) and None)


@pytest.mark.slow  # three processes, each importing shipsync: seconds
def test_writers_creating_a_lake_at_once_all_commit(tmp_path: Path) -> None:
    lake = tmp_path / "warehouse"
    context = multiprocessing.get_context("spawn")  # a fresh interpreter each, as separate commands are
    start = context.Barrier(WRITERS)
    sys.path.insert(0, str(Path(__file__).parent))
    writers = [context.Process(target=open_and_write, args=(str(lake), f"w{n}", start)) for n in range(WRITERS)]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join(timeout=HANG_S)
    assert [w.exitcode for w in writers] == [0] * WRITERS

    from support.lake import analyst

    with analyst(lake) as con:
        assert sorted(r[0] for r in con.execute("SELECT id FROM webhooks").fetchall()) == [f"w{n}" for n in range(WRITERS)]
        assert con.execute("SELECT count(*) FROM _shipsync_schema").fetchone() == (1,)
        assert con.execute("SELECT count(*) FROM sync_runs WHERE status = 'completed'").fetchone() == (WRITERS,)
