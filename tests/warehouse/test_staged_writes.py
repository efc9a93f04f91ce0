"""A run's staged writes at scale: rows staged as files that go when the run's warehouse closes,
batches of link replacements merged as one with the same result as one after another, and large
merges in slices of keys that give the same rows and counts as one merge."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from shipsync.api.tracking_models import Container
from shipsync.errors import ValueRefusedError
from shipsync.warehouse import staged_files, upsert
from shipsync.warehouse.declared_rows import declared_tables_batch
from shipsync.warehouse.load import write_batch
from shipsync.warehouse.unit_of_work import CommitMessage, open_warehouse
from support.lake import analyst, location, write_now


@pytest.fixture
def staging_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where this test's runs keep their staged files (the system's temp folder, made private)."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def _staged_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("shipsync-stage-*/*.parquet"))


def test_staged_rows_are_files_removed_when_the_run_ends_committed_or_not(warehouse: Path, staging_folder: Path) -> None:
    write_now(warehouse, {})
    docs = {"documents": {"id": ["a", "b"], "name": ["A", "B"]}}
    with open_warehouse(location(warehouse)) as lake:
        write_batch(lake, docs)
        write_batch(lake, {"documents": {"id": ["c"], "name": ["C"]}})
        assert len(_staged_files(staging_folder)) == 2  # on disk, not in memory: one file per batch
        lake.commit(CommitMessage("test", "committed"))
        assert _staged_files(staging_folder) == []
    with pytest.raises(RuntimeError, match="went away"), open_warehouse(location(warehouse)) as lake:
        write_batch(lake, docs)
        assert _staged_files(staging_folder)
        raise RuntimeError("the service went away")
    assert list(staging_folder.glob("shipsync-stage-*")) == []
    with analyst(warehouse) as con:
        assert con.execute("SELECT id FROM documents ORDER BY id").fetchall() == [("a",), ("b",), ("c",)]


def test_the_tables_a_deferred_write_reads_are_files_too(warehouse: Path, staging_folder: Path) -> None:
    """`stage` casts as it keeps (a cast the data refuses keeps nothing), to a file a deferred write
    reads at commit; `unstage` removes it; the run's end removes the rest."""
    write_now(warehouse, {})
    cast = "SELECT id, CAST(size AS INTEGER) AS size FROM _shipsync_incoming"
    with open_warehouse(location(warehouse)) as lake:
        kept = lake.stage("sizes", pa.table({"id": ["a", "b"], "size": ["1", "2"]}), select=cast)
        with pytest.raises(ValueRefusedError, match="Conversion Error"):
            lake.stage("sizes", pa.table({"id": ["c"], "size": ["wide"]}), select=cast)
        given_up = lake.stage("sizes", pa.table({"id": ["d"], "size": ["4"]}), select=cast)
        assert len(_staged_files(staging_folder)) == 2  # on disk, not in a database in memory; nothing of the refused batch
        lake.unstage(given_up)
        assert len(_staged_files(staging_folder)) == 1
        assert lake.stager.execute(f"SELECT * FROM {kept} ORDER BY id").fetchall() == [("a", 1), ("b", 2)]

        def insert_sizes(con: duckdb.DuckDBPyConnection, commit: object) -> None:
            con.execute(f"INSERT INTO documents (id, file_size_bytes) SELECT id, size FROM {kept}")

        lake.defer(["documents"], insert_sizes)
        lake.commit(CommitMessage("test", "deferred"))
    assert list(staging_folder.glob("shipsync-stage-*")) == []
    with analyst(warehouse) as con:
        assert con.execute("SELECT id, file_size_bytes FROM documents ORDER BY id").fetchall() == [("a", 1), ("b", 2)]


def test_a_run_that_stages_removes_the_folders_of_killed_runs(warehouse: Path, staging_folder: Path) -> None:
    """A process killed mid-run leaves its folders; the next run that stages removes those of
    processes that are gone and were left alone a while, and nothing of anyone still running."""
    write_now(warehouse, {})
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    dead_pid = int(gone.stdout)
    long_ago = time.time() - 2 * staged_files.ORPHAN_AGE_S
    left = {
        "killed": staging_folder / f"shipsync-stage-{dead_pid}-abc",
        "killed merge": staging_folder / f"shipsync-merge-{dead_pid}-def",
        "running": staging_folder / f"shipsync-stage-{os.getppid()}-ghi",  # a live process (pytest's parent)
        "just left": staging_folder / f"shipsync-links-{dead_pid}-jkl",
        "not ours": staging_folder / f"other-stage-{dead_pid}-mno",
    }
    for name, folder in left.items():
        folder.mkdir()
        (folder / "000001-documents.parquet").write_bytes(b"rows")
        if name != "just left":
            os.utime(folder, (long_ago, long_ago))
    with open_warehouse(location(warehouse)) as lake:
        write_batch(lake, {"documents": {"id": ["a"], "name": ["A"]}})
        assert {name for name, folder in left.items() if folder.exists()} == {"running", "just left", "not ours"}
        assert len(_staged_files(staging_folder)) == 2  # this run's batch, and the running process's
    assert left["running"].exists()


def test_a_folder_its_run_removes_while_the_sweep_looks_is_passed_over(staging_folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Other runs make and remove their folders all the time: one listed and then gone is skipped."""
    vanishing = staging_folder / f"shipsync-merge-{os.getpid()}-abc"
    vanishing.mkdir()
    listing = os.scandir

    def listed_then_removed(path: str) -> Iterator[os.DirEntry[str]]:
        entries = list(listing(path))
        vanishing.rmdir()  # the run that made it is done with it, after the sweep listed it
        return contextlib.nullcontext(iter(entries))  # type: ignore[return-value]

    monkeypatch.setattr(staged_files.os, "scandir", listed_then_removed)
    assert staged_files.sweep_orphans() == []


def test_link_replacements_of_several_batches_end_as_if_made_one_after_another(warehouse: Path) -> None:
    """An owner's links are those of the last batch that names it, plus links later batches carry
    for it without naming it; owners no batch names keep theirs."""
    write_now(
        warehouse,
        {"document_shipments": {"document_id": ["d", "d", "e", "f"], "shipment_id": ["s0", "s9", "s0", "s0"]}},
        link_owners={"document_shipments": ["d", "e", "f"]},
    )

    def links(pairs: list[tuple[str, str]]) -> dict[str, dict[str, list[object]]]:
        return {"document_shipments": {"document_id": [p[0] for p in pairs], "shipment_id": [p[1] for p in pairs]}}

    with open_warehouse(location(warehouse)) as lake:
        write_batch(lake, links([("d", "s1"), ("d", "s2"), ("e", "s1")]), link_owners={"document_shipments": ["d", "e"]})
        write_batch(lake, links([("d", "s3")]), link_owners={"document_shipments": ["d"]})
        write_batch(lake, links([("d", "s4"), ("g", "s1")]), link_owners={"document_shipments": ["g"]})
        counts = lake.commit(CommitMessage("test", "links")).counts["document_shipments"]
    with analyst(warehouse) as con:
        found = con.execute("SELECT document_id, shipment_id FROM document_shipments ORDER BY ALL").fetchall()
    assert found == [("d", "s3"), ("d", "s4"), ("e", "s1"), ("f", "s0"), ("g", "s1")]
    assert (counts.inserted, counts.deleted) == (4, 3)  # d-s3, d-s4, e-s1, g-s1 in; d-s0, d-s9, e-s0 out


def test_a_merge_in_slices_gives_the_rows_and_counts_of_one_merge(warehouse: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_now(
        warehouse, {"documents": {"id": [f"d{n}" for n in range(10)], "name": ["old"] * 10, "observed_at": ["2026-01-02T00:00:00Z"] * 10}}
    )
    monkeypatch.setattr(upsert, "ROWS_PER_SLICE", 4)
    ids = [f"d{n}" for n in range(5, 25)]
    with open_warehouse(location(warehouse)) as lake:
        # Two copies of every key: the second batch's wins, unless it is older than what the lake holds.
        write_batch(lake, {"documents": {"id": ids, "name": ["first"] * 20, "observed_at": ["2026-01-03T00:00:00Z"] * 20}})
        stamps = ["2026-01-01T00:00:00Z" if n < 10 else "2026-01-03T00:00:00Z" for n in range(5, 25)]
        write_batch(lake, {"documents": {"id": ids, "name": [f"second {i}" for i in ids], "observed_at": stamps}})
        counts = lake.commit(CommitMessage("test", "sliced")).counts["documents"]
    with analyst(warehouse) as con:
        names = dict(con.execute("SELECT id, name FROM documents").fetchall())
    # d5-d9: their newest staged copy is the first batch's (the second is older), which replaces "old".
    assert names == {f"d{n}": "old" if n < 5 else "first" if n < 10 else f"second d{n}" for n in range(25)}
    assert (counts.inserted, counts.updated, counts.unchanged, counts.stale) == (15, 5, 0, 0)


def test_new_containers_in_slices_get_their_derived_columns(warehouse: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(upsert, "ROWS_PER_SLICE", 2)
    hold, released = {"name": "customs", "status": "hold"}, {"name": "x", "status": "released"}
    demurrage = {"type": "demurrage", "amount": 100.0, "currency_code": "USD"}
    served = [
        ({"holds_at_pod_terminal": [hold], "fees_at_pod_terminal": [demurrage]}),
        {"holds_at_pod_terminal": []},
        {},
        {"holds_at_pod_terminal": [released]},
    ]
    resources = [{"id": f"c{n}", "type": "container", "attributes": attributes} for n, attributes in enumerate(served)]
    write_now(warehouse, declared_tables_batch(Container, resources, observed_at="2026-01-01T00:00:00Z"))
    with analyst(warehouse) as con:
        found = con.execute("SELECT id, has_holds, fee_total FROM containers ORDER BY id").fetchall()
    assert found == [("c0", True, 100.0), ("c1", False, None), ("c2", None, None), ("c3", False, None)]
