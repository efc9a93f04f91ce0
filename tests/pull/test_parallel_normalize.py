"""Listing pages normalized in worker processes: the same rows as normalizing them in the run's own
process, staged in the order they were made, and a worker that dies fails the run with nothing
committed."""

from __future__ import annotations

import copy
import json
import multiprocessing
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import Future
from pathlib import Path

import orjson
import pyarrow as pa
import pytest

from shipsync.api.jsonapi import parse_page, read_page_head
from shipsync.errors import ApiNetworkError, WarehouseError
from shipsync.pull import documents
from shipsync.pull.documents import pull_documents
from shipsync.pull.fetch import Fetched
from shipsync.warehouse.ledger import warehouse_run
from shipsync.warehouse.load import batch_tables
from shipsync.warehouse.normalize import document_page_columns
from shipsync.warehouse.normalize_workers import NormalizedPages, NormalizingPool, normalize_document_pages, normalizing_pool, result_of
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
def test_a_document_on_two_pages_keeps_the_later_pages_copy(warehouse: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A listing that shifts while it is walked sends a document twice; the later page's copy (its
    name, its links) wins although the two pages go to different workers, whichever ends first."""
    monkeypatch.setattr(documents, "WORKERS_FROM_PAGES", 1)
    monkeypatch.setattr(documents, "PAGES_PER_TASK", 1)
    pages = list(document_pages(500))
    moved = copy.deepcopy(pages[0]["data"][0])
    moved["attributes"]["name"] = "renamed while the listing was walked"
    moved["relationships"]["cargos"]["data"] = moved["relationships"]["cargos"]["data"][:1]
    pages[4]["data"].append(moved)
    bodies = [orjson.dumps(page) for page in pages]
    # The first page is the heaviest task (its included resources five times over): it ends last.
    first = orjson.loads(bodies[0])
    first["included"] = first["included"] * 5
    bodies[0] = orjson.dumps(first)
    fetched = Fetched()
    for body in bodies:
        fetched.add_page(read_page_head(body))
    with warehouse_run(location(warehouse), "pull_documents", {}) as run, run.step("pull_documents", {}), normalizing_pool(2) as pool:
        documents.load_documents(run.warehouse, fetched, pool)
    with analyst(warehouse) as con:
        assert con.execute("SELECT name FROM documents WHERE id = ?", [moved["id"]]).fetchall() == [(moved["attributes"]["name"],)]
        links = con.execute("SELECT container_id FROM document_containers WHERE document_id = ?", [moved["id"]]).fetchall()
        assert links == [(moved["relationships"]["cargos"]["data"][0]["id"],)]
        assert con.execute("SELECT count(*) FROM documents").fetchone() == (500,)


@pytest.mark.slow  # starts worker processes
def test_a_pull_normalized_by_workers_gives_the_rows_of_one_normalized_in_process(
    make_sandbox: SandboxFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sandbox = make_sandbox(documents=450)  # five listing pages
    monkeypatch.setattr(documents, "WORKERS_FROM_PAGES", 1)
    monkeypatch.setattr(documents, "PAGES_PER_TASK", 2)  # three tasks
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


def test_a_page_with_what_the_fast_readers_refuse_or_round_reads_as_python_reads_it() -> None:
    big = b'{"data": [{"id": "d1", "type": "document", "attributes": {"file_size_bytes": 123456789012345678901234}}], "included": []}'
    odd = (
        b'{"data": [{"id": "d1", "type": "document", "attributes": {"file_size_bytes": 123456789012345678901234}}], '
        b'"included": [{"id": "u1", "type": "user", "attributes": {"score": NaN}}], "links": {"next": "/v2/documents?page[number]=2"}}'
    )
    for body in (big, odd):  # alone, and beside what only Python's reader takes (NaN)
        head = read_page_head(body)
        assert head.data == json.loads(body)["data"]
        assert head.data[0]["attributes"]["file_size_bytes"] == 123456789012345678901234
        normalized = normalize_document_pages([body], None)
        # Too big for its column: kept exactly in the leftovers (never rounded to a float), no failed load.
        assert '"file_size_bytes":123456789012345678901234' in normalized.tables["documents"].column("leftovers")[0].as_py()
    assert read_page_head(odd).next_link == "/v2/documents?page[number]=2"
    assert normalize_document_pages([odd], None).tables["users"].column("id").to_pylist() == ["u1"]
    for bad, message in ((b"[1, 2]", "not a JSON object"), (b'{"links": {}}', "no `data` member"), (b'{"data": [', "Expecting value")):
        with pytest.raises(ValueError, match=message):
            read_page_head(bad)


@pytest.mark.slow  # starts worker processes
def test_a_page_whose_included_text_is_not_utf8_fails_the_run_with_one_line(warehouse: Path) -> None:
    body = b'{"data": [{"id": "d1", "type": "document", "attributes": {}}], "included": [{"id": "u1", "type": "user", "name": "\xff"}]}'
    head = read_page_head(body)  # the walk's read passes over `included` without decoding it
    assert head.data[0]["id"] == "d1"
    with pytest.raises(ApiNetworkError, match=r"^GET /documents: malformed response: a listing page is not readable JSON"):
        normalize_document_pages([body], None)  # a small batch, in the run's own process
    with normalizing_pool(1) as pool:
        assert pool is not None
        task = pool.submit([body], None)
        with pytest.raises(ApiNetworkError, match=r"^GET /documents: malformed response: a listing page is not readable JSON \(.*utf-8"):
            result_of(task)


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
    fetched = Fetched()
    for page in document_pages(2_000):
        fetched.add_page(read_page_head(orjson.dumps(page)))
    others = set(multiprocessing.active_children())
    with (
        pytest.raises(WarehouseError, match=r"worker process normalizing documents ended abruptly.*SHIPSYNC_NORMALIZE_WORKERS=0"),
        warehouse_run(location(warehouse), "pull_documents", {}) as run,
        run.step("pull_documents", {}),
        normalizing_pool(1) as pool,
    ):
        documents.load_documents(run.warehouse, fetched, pool)
        for worker in set(multiprocessing.active_children()) - others:  # the pool's, no other
            os.kill(worker.pid or 0, signal.SIGKILL)
    with analyst(warehouse) as con:
        assert con.execute("SELECT count(*) FROM documents").fetchone() == (0,)
        assert con.execute("SELECT status FROM sync_runs WHERE flow = 'pull_documents'").fetchall() == [("failed",)]


@pytest.mark.slow  # starts worker processes
def test_a_run_failing_while_pages_are_normalized_fails_with_its_own_error(warehouse: Path) -> None:
    fetched = Fetched()
    for page in document_pages(3_000):
        fetched.add_page(read_page_head(orjson.dumps(page)))
    with (
        pytest.raises(RuntimeError, match="the service went away"),
        warehouse_run(location(warehouse), "pull_documents", {}) as run,
        run.step("pull_documents", {}),
        normalizing_pool(1) as pool,
    ):
        documents.load_documents(run.warehouse, fetched, pool)  # three tasks wait, two not started
        raise RuntimeError("the service went away")
    with analyst(warehouse) as con:
        assert con.execute("SELECT count(*) FROM documents").fetchone() == (0,)
        assert con.execute("SELECT status, errors FROM sync_runs").fetchall() == [("failed", ["RuntimeError: the service went away"])]


_PARENT = """
import multiprocessing, sys, time
from shipsync.warehouse.normalize_workers import NormalizingPool

if __name__ == "__main__":
    pool = NormalizingPool(2)
    before = set(multiprocessing.active_children())
    tasks = [pool.submit([b'{"data": []}'], None) for _ in range(4)]
    [task.result() for task in tasks]
    print(" ".join(str(p.pid) for p in multiprocessing.active_children()), flush=True)
    time.sleep(60)
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


@pytest.mark.slow  # starts worker processes
@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM])
def test_workers_end_when_the_run_s_process_dies(tmp_path: Path, how: signal.Signals) -> None:
    """A run killed (kill -9, out of memory) or stopped by SIGTERM (a cancelled flow run) leaves no
    worker behind holding its memory."""
    script = tmp_path / "parent.py"
    script.write_text(_PARENT)
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        workers = [int(pid) for pid in parent.stdout.readline().split()]
        assert workers and all(_alive(pid) for pid in workers)
        parent.send_signal(how)
        parent.wait(timeout=30)
        deadline = time.monotonic() + 20
        while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(_alive(pid) for pid in workers)
    finally:
        parent.kill()
        parent.wait()


_INTERRUPTED = """
import multiprocessing, time
from shipsync.warehouse.normalize_workers import NormalizingPool, result_of

if __name__ == "__main__":
    pool = NormalizingPool(2)
    [result_of(pool.submit([b'{"data": []}'], None)) for _ in range(4)]
    try:
        print("ready", flush=True)  # in the try: the test's Ctrl-C may come as soon as this is out
        time.sleep(60)
    except KeyboardInterrupt:
        pass  # the run's own handling of Ctrl-C; its workers must still be there to finish
    print(len(result_of(pool.submit([b'{"data": [{"id": "d1", "type": "document"}]}'], None)).documents), flush=True)
    pool.close()
"""


@pytest.mark.slow  # starts worker processes
def test_ctrl_c_is_the_runs_to_handle_not_its_workers(tmp_path: Path) -> None:
    script = tmp_path / "interrupted.py"
    script.write_text(_INTERRUPTED)
    # Its own process group, as a terminal's foreground job: Ctrl-C is SIGINT to every process in it.
    run = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert run.stdout is not None
        assert run.stdout.readline().strip() == "ready"
        os.killpg(run.pid, signal.SIGINT)
        out, err = run.communicate(timeout=60)
        assert out.strip() == "1", err
        assert "KeyboardInterrupt" not in err
    finally:
        run.kill()
        run.wait()
