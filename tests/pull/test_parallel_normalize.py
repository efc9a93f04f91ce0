"""Listing pages normalized in worker processes: the same rows as normalizing them in the run's own
process, staged in the order they were made, and a worker that dies fails the run with nothing
committed."""

from __future__ import annotations

import multiprocessing
import os
import signal
from concurrent.futures import Future
from pathlib import Path

import orjson
import pyarrow as pa
import pytest

from shipsync.api.jsonapi import parse_page, read_page_head
from shipsync.errors import WarehouseError
from shipsync.pull import documents
from shipsync.pull.documents import pull_documents
from shipsync.warehouse.load import batch_tables
from shipsync.warehouse.normalize import document_page_columns
from shipsync.warehouse.normalize_workers import NormalizedPages, NormalizingPool, normalize_document_pages, result_of
from shipsync.warehouse.unit_of_work import CommitMessage, open_warehouse
from shipsync_sandbox.stream import document_pages
from support.lake import analyst, location, write_now
from support.sandboxes import SandboxFactory, settings_for

# Every column but the stamps a run sets (when it read and wrote), which differ between two runs.
_STAMPS = {"_synced_at", "_run_id", "observed_at", "first_seen_at", "last_changed_at"}
_TABLES = ("documents", "document_shipments", "document_containers", "containers", "shipments", "users", "accounts", "email_submissions")


def _rows(warehouse: Path) -> dict[str, list[tuple[object, ...]]]:
    found = {}
    with analyst(warehouse) as con:
        for table in _TABLES:
            columns = [row[0] for row in con.execute(f"DESCRIBE {table}").fetchall() if row[0] not in _STAMPS]
            listed = ", ".join(f'"{c}"' for c in columns)
            found[table] = sorted(con.execute(f"SELECT {listed} FROM {table}").fetchall(), key=repr)
    return found


@pytest.mark.slow  # starts worker processes
def test_a_pull_normalized_by_workers_gives_the_rows_of_one_normalized_in_process(
    make_sandbox: SandboxFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sandbox = make_sandbox(documents=450)  # five listing pages
    monkeypatch.setattr(documents, "WORKERS_FROM_PAGES", 1)
    monkeypatch.setattr(documents, "PAGES_PER_TASK", 2)  # three tasks: staged in order, or links go wrong
    by_workers, in_process = tmp_path / "by-workers", tmp_path / "in-process"
    spawned_before = len(multiprocessing.active_children())
    record = pull_documents(settings_for(sandbox, by_workers, normalize_workers=2), all_documents=True)
    assert record.status == "completed"
    assert len(multiprocessing.active_children()) == spawned_before  # the workers stopped with the step
    pull_documents(settings_for(sandbox, in_process, normalize_workers=0), all_documents=True)
    rows = _rows(by_workers)
    assert len(rows["documents"]) == 450 and rows["document_containers"]
    assert rows == _rows(in_process)
    again = pull_documents(settings_for(sandbox, by_workers, normalize_workers=2), all_documents=True)
    assert again.totals().inserted == again.totals().updated == again.totals().deleted == 0


@pytest.mark.slow  # starts worker processes
def test_the_head_of_a_page_reads_as_the_whole_page_and_the_workers_read_the_rest() -> None:
    bodies = [orjson.dumps(page) for page in document_pages(250)]
    pages = [parse_page(orjson.loads(body)) for body in bodies]
    heads = [read_page_head(body) for body in bodies]
    assert [h.data for h in heads] == [p.data for p in pages] and [h.links for h in heads] == [p.links for p in pages]
    assert all(h.included == [] for h in heads)
    whole = document_page_columns([d for p in pages for d in p.data], [r for p in pages for r in p.included], "2026-11-26T00:00:00+00:00")
    expected = batch_tables(whole)
    pool = NormalizingPool(2)
    try:
        normalized = result_of(pool.submit([h.body for h in heads], "2026-11-26T00:00:00+00:00"))
    finally:
        pool.close()
    assert normalized.documents == [str(d["id"]) for p in pages for d in p.data]
    assert normalized.tables.keys() == expected.keys()
    for table, arrow in expected.items():
        assert normalized.tables[table].equals(arrow), table


def test_a_page_with_what_the_fast_reader_refuses_reads_as_python_reads_it() -> None:
    body = (
        b'{"data": [{"id": "d1", "type": "document", "attributes": {"file_size_bytes": 123456789012345678901234}}], '
        b'"included": [{"id": "u1", "type": "user", "attributes": {"score": NaN}}], "links": {"next": "/v2/documents?page[number]=2"}}'
    )
    head = read_page_head(body)
    assert head.data[0]["attributes"]["file_size_bytes"] == 123456789012345678901234
    assert head.next_link == "/v2/documents?page[number]=2"
    normalized = normalize_document_pages([body], None)
    assert normalized.documents == ["d1"] and normalized.tables["users"].column("id").to_pylist() == ["u1"]
    # Too big for the column: kept exactly in the leftovers (JSON), not lost, and no failed load.
    assert "123456789012345678901234" in normalized.tables["documents"].column("leftovers")[0].as_py()
    for bad, message in ((b"[1, 2]", "not a JSON object"), (b'{"links": {}}', "no `data` member"), (b'{"data": [', "Expecting value")):
        with pytest.raises(ValueError, match=message):
            read_page_head(bad)


def _staged(value: str) -> Future[NormalizedPages]:
    task: Future[NormalizedPages] = Future()
    task.set_result(NormalizedPages({"documents": pa.table({"id": ["d1"], "name": [value]})}, ["d1"]))
    return task


def test_rows_staged_later_keep_their_place_among_the_writes(warehouse: Path) -> None:
    write_now(warehouse, {})
    with open_warehouse(location(warehouse)) as lake:
        made_first: Future[NormalizedPages] = Future()  # not ready until after the next write is made
        lake.later(made_first, lambda done: documents.stage_documents(lake, result_of(done)), at_most=4)
        lake.later(_staged("second"), lambda done: documents.stage_documents(lake, result_of(done)), at_most=4)
        made_first.set_result(_staged("first").result())
        lake.upsert("documents", pa.table({"id": ["d1"], "name": ["third, made last"]}))
        lake.commit(CommitMessage("test", "ordered"))
    with analyst(warehouse) as con:
        assert con.execute("SELECT name FROM documents").fetchall() == [("third, made last",)]


def test_at_most_so_many_wait_to_be_staged(warehouse: Path) -> None:
    write_now(warehouse, {})
    staged: list[str] = []
    with open_warehouse(location(warehouse)) as lake:
        for name in ("a", "b", "c"):
            lake.later(_staged(name), lambda done: staged.append(result_of(done).tables["documents"]["name"][0].as_py()), at_most=1)
        assert staged == ["a", "b"]  # the third waits; the first two were staged to make room, in order
        lake.commit(CommitMessage("test", "bounded"))
        assert staged == ["a", "b", "c"]


@pytest.mark.slow  # starts worker processes
def test_a_worker_that_dies_fails_the_run_with_nothing_committed(warehouse: Path) -> None:
    write_now(warehouse, {})
    bodies = [orjson.dumps(page) for page in document_pages(2_000)]  # long enough to be killed mid-way
    pool = NormalizingPool(1)
    try:
        with open_warehouse(location(warehouse)) as lake:
            task = pool.submit(bodies, None)
            for worker in multiprocessing.active_children():
                os.kill(worker.pid or 0, signal.SIGKILL)
            lake.later(task, lambda done: documents.stage_documents(lake, result_of(done)), at_most=4)
            with pytest.raises(WarehouseError, match=r"worker process normalizing documents ended abruptly.*SHIPSYNC_NORMALIZE_WORKERS=0"):
                lake.commit(CommitMessage("test", "killed"))
    finally:
        pool.close()
    with analyst(warehouse) as con:
        assert con.execute("SELECT count(*) FROM documents").fetchall() == [(0,)]
