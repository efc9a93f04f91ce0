"""The `Warehouse`: one run's hold on the lake. One connection for all of the run's reads and writes;
its writes committed together as one DuckLake snapshot, or not at all.

A run reads the lake as committed (each read sees the newest snapshot) and *stages* its writes: each
write is kept with the rows it needs, in Parquet files of a private temporary folder (see
`staged_files`: an upsert's, a link replacement's and an append's rows, and the tables a deferred
write reads), and nothing reaches the lake until `commit`. `commit` then opens one
transaction on the lake, replays the staged writes in the order they were made, adds the run's
ledger row and commit message, and commits. So:
- a run's network I/O never happens while a lake transaction is open (runs fetch, stage, fetch
  again, and commit at the end: the transaction lasts as long as the replay, not the run);
- analysts see whole runs: one snapshot per run, whose commit message names the flow and run;
- a commit that races another writer's is redone, not lost. Writers turn DuckLake's own retry off
  (`ducklake_max_retry_count = 0`), so a commit succeeds only on top of the snapshot its transaction
  started from (the run's snapshot id is that one plus one, and the ledger row records it), and a
  commit that lost a race is replayed from the staged rows against the new state. Every write is a
  merge that reads the lake (newer-wins upserts, the event log's dedupe by notification id), so
  the replay judges what others committed meanwhile: that is what keeps the dedupe whole across
  processes and hosts without unique constraints. Retries back off and end at a deadline with an
  error naming the writers that kept committing.

Consecutive upserts of one table with the same columns are kept as one staged write and merged
once (a pull of many batches is one merge per table, not one per batch), unless another kind of
write to that table came between them; so are consecutive link replacements of one table. A read
that must see the run's own pending rows (ids that a later step of the same run fetches) unions them
in through `seeing_pending`.
"""

from __future__ import annotations

import itertools
import logging
import random
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, NamedTuple

import duckdb
import pyarrow as pa

from shipsync.errors import WarehouseBusyError, WarehouseError
from shipsync.json_text import dumps
from shipsync.redaction import redact
from shipsync.warehouse.coerce import refused_values
from shipsync.warehouse.identifiers import ident
from shipsync.warehouse.lake import LakeConnection, connect_lake
from shipsync.warehouse.races import lost_a_race
from shipsync.warehouse.schema_create import ensure_schema
from shipsync.warehouse.staged_files import StagedFiles, StagedRows, copy_to_file, parquet_relation
from shipsync.warehouse.upsert import PART, SEQ, TableCounts, cast_column, merge_links, merge_upsert, sql_types, staged
from shipsync.warehouse_location import LakeLocation

log = logging.getLogger(__name__)

DEFAULT_COMMIT_DEADLINE_S = 600.0
# A staged write replayed at commit: it reads its staged rows and the lake, writes the lake, and
# says what it changed per table. It must give the same result whenever it is replayed.
Replay = Callable[[duckdb.DuckDBPyConnection, "CommitContext"], Mapping[str, TableCounts] | None]
# The last write of a commit (the ledger rows), given what each staged write changed, in order.
Finish = Callable[[duckdb.DuckDBPyConnection, "CommitContext", Sequence[Mapping[str, "TableCounts"]]], None]


@dataclass(frozen=True)
class CommitContext:
    """What a replayed write may need to know about the commit it is part of."""

    snapshot_id: int
    committed_at: datetime
    run_id: str


class _Batches(NamedTuple):
    """What batches a staged write gathers: of one kind of write, to one table, with one set of columns."""

    kind: Literal["upsert", "links"]
    table: str
    columns: pa.Schema


@dataclass
class _Write:
    """One staged write: the tables it writes and how to replay it. An upsert or a replacement of
    links keeps its rows in `rows` (and the owners whose links it replaces in `owners`), under
    `joins`: a later batch of the same kind, table and columns joins it instead of starting a write."""

    tables: frozenset[str]
    replay: Replay
    joins: _Batches | None = None
    rows: StagedRows | None = None
    owners: StagedRows | None = None


@dataclass(frozen=True)
class CommitMessage:
    """What the snapshot says about the run that made it (DuckLake's commit message and extra info)."""

    flow: str
    run_id: str
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Committed:
    snapshot_id: int | None  # None when there was nothing to commit
    counts: dict[str, TableCounts]  # what the commit changed, per table
    attempts: int


class Warehouse:
    """A connection to the lake with a stage for the run's writes (see the module's docstring).

    Made by `open_warehouse`; `con` is for reads (unqualified names are the account's tables and
    views). Writes: `upsert`, `replace_links`, `append`, `defer`; then `commit` once."""

    def __init__(self, lake: LakeConnection, location: LakeLocation, *, read_only: bool) -> None:
        self.con = lake.con
        self.alias = lake.alias  # what the lake is attached as on `con` (for DuckLake's functions)
        self.location = location
        self.read_only = read_only
        # Every staged write keeps its rows in files (`_files`): upserts, link replacements and
        # appends as Arrow writes them, the tables a deferred write reads (`stage`) as DuckDB's
        # COPY writes them, on a connection of their own that has the engine's memory database in
        # use: on `con`, each statement outside a transaction opens one on the lake too, a catalog
        # read for every batch registered.
        self.stager = lake.con.cursor()
        self._files = StagedFiles()
        self._writes: list[_Write] = []
        self._staged_tables: dict[str, Path] = {}  # what `stage` returned -> its file
        self._seq = itertools.count(0)
        self._barrier = 0

    # -- staging -------------------------------------------------------------------------------

    def _writable(self) -> None:
        if self.read_only:
            raise WarehouseError("this warehouse connection is read-only")

    def _with_seq(self, batch: pa.Table) -> pa.Table:
        # The order rows were staged in: a later copy of a key wins over an earlier one.
        start = next(self._seq)
        for _ in range(max(0, batch.num_rows - 1)):
            next(self._seq)
        return batch.append_column(SEQ, pa.array(range(start, start + batch.num_rows), pa.int64()))

    def _last_write_to(self, table: str) -> _Write | None:
        for write in reversed(self._writes[self._barrier :]):
            if table in write.tables:
                return write
        return None

    def _joinable(self, joins: _Batches) -> _Write | None:
        """The staged write a batch of `joins` (kind, table, columns) may join: the last write to the
        table since the mark, if it is of the same kind and columns."""
        last = self._last_write_to(joins.table)
        return last if last is not None and last.joins == joins else None

    def mark(self) -> int:
        """How many writes are staged; later upserts start writes of their own (so that what each
        part of a run changed can be told apart at commit: `Committed`'s counts per write)."""
        self._barrier = len(self._writes)
        return self._barrier

    def upsert(self, table: str, batch: pa.Table) -> None:
        """Merge `batch` into `table` on its key at commit: newer wins, unchanged rows are left alone
        (see `upsert.merge_upsert`). A batch may carry only some columns: only those are written."""
        self._writable()
        if batch.num_rows == 0:
            return
        joins = _Batches("upsert", table, batch.schema)
        if (last := self._joinable(joins)) is not None and last.rows is not None:
            last.rows.files.append(self._files.write(table, self._with_seq(batch)))
            return
        rows = self._files.rows(table, self._with_seq(batch))

        def replay(con: duckdb.DuckDBPyConnection, commit: CommitContext) -> dict[str, TableCounts]:
            return {table: merge_upsert(con, table, rows.relation, run_id=commit.run_id, synced_at=commit.committed_at)}

        self._writes.append(_Write(frozenset({table}), replay, joins, rows))

    def replace_links(self, table: str, owner_column: str, owners: Sequence[str], batch: pa.Table) -> None:
        """Upsert link rows, and at commit delete the links of `owners` the batch does not have (an
        owner's links are those of the last batch that named it, and of any later batch)."""
        self._writable()
        if batch.num_rows == 0 and not owners:
            return
        part = next(self._seq)  # which batch named an owner: its latest naming holds its links
        links = self._with_seq(batch).append_column(PART, pa.array([part] * batch.num_rows, pa.int64()))
        named = pa.table({"owner": pa.array(list(owners), pa.string()), PART: pa.array([part] * len(owners), pa.int64())})
        joins = _Batches("links", table, batch.schema)
        if (last := self._joinable(joins)) is not None and last.rows is not None and last.owners is not None:
            last.rows.files.append(self._files.write(table, links))
            last.owners.files.append(self._files.write(f"{table}_owners", named))
            return
        rows, owned = self._files.rows(table, links), self._files.rows(f"{table}_owners", named)

        def replay(con: duckdb.DuckDBPyConnection, commit: CommitContext) -> dict[str, TableCounts]:
            return {
                table: merge_links(
                    con, table, owner_column, rows.relation, owned.relation, run_id=commit.run_id, synced_at=commit.committed_at
                )
            }

        self._writes.append(_Write(frozenset({table}), replay, joins, rows, owned))

    def append(self, table: str, batch: pa.Table) -> None:
        """Insert the rows of `batch` (by column name) into `table` at commit."""
        self._writable()
        if batch.num_rows == 0:
            return
        rows = self._files.rows(table, batch)
        listed = ", ".join(ident(name) for name in batch.column_names)

        def replay(con: duckdb.DuckDBPyConnection, commit: CommitContext) -> dict[str, TableCounts]:
            con.execute(f"INSERT INTO {ident(table)} ({listed}) SELECT {listed} FROM {rows.relation}")
            return {table: TableCounts(inserted=batch.num_rows)}

        self._writes.append(_Write(frozenset({table}), replay))

    def stage(self, label: str, batch: pa.Table, *, select: str = "SELECT * FROM _shipsync_incoming") -> str:
        """Keep `batch` in the stage for a deferred write to read (through `select`, a query of
        `_shipsync_incoming`, e.g. casts to a table's types: if the data refuses it, nothing is
        staged and `ValueRefusedError` is raised); the relation to read it by. In a staged file, not a table
        of an in-memory database: such tables hold a receiver's whole backlog in memory until the
        commit."""
        self._writable()
        path = self._files.new_path(label)
        with staged(self.stager, "_shipsync_incoming", batch), refused_values():
            name = copy_to_file(self.stager, select, path)
        self._staged_tables[name] = path
        return name

    def staged_union(self, names: Sequence[str]) -> str:
        """The rows of several relations `stage` returned, as one read (columns matched by name)."""
        return parquet_relation([self._staged_tables[name] for name in names], union_by_name=True)

    def unstage(self, name: str) -> None:
        """Remove what `stage` kept (its file) when no write reads it (a batch given up before its
        writes were deferred)."""
        path = self._staged_tables.pop(name, None)
        if path is not None:
            path.unlink(missing_ok=True)

    def defer(self, tables: Sequence[str], replay: Replay) -> None:
        """A write of its own to `tables`, replayed at commit in its place among the others. It reads
        only the lake and what it staged (`stage`), and gives the same result on every replay."""
        self._writable()
        self._writes.append(_Write(frozenset(tables), replay))

    def _pending_rows(self, table: str) -> list[StagedRows]:
        return [
            w.rows
            for w in self._writes
            if w.joins is not None and w.joins.kind == "upsert" and w.joins.table == table and w.rows is not None
        ]

    def pending(self, table: str) -> list[str]:
        """The staged relations holding rows this run will upsert into `table` (to union into a read
        that must see them before the commit)."""
        return [rows.relation for rows in self._pending_rows(table)]

    @contextmanager
    def preview(self) -> Iterator[None]:
        """Inside the block, reads see the lake as this run's commit would leave it: the staged writes
        are replayed in a transaction that is rolled back when the block ends (no network I/O in it:
        a plan reads what a refresh staged, then the block ends before anything is sent). Costs a
        replay: for a few thousand rows (a bulk apply's refresh); `seeing_pending` is the cheap way
        for the sets of ids a pull's later steps read."""
        self.con.execute("BEGIN TRANSACTION")
        try:
            commit = CommitContext(snapshot_id=-1, committed_at=datetime.now(UTC), run_id="preview")
            for write in self._writes:
                write.replay(self.con, commit)
            yield
        finally:
            with suppress(duckdb.Error):
                self.con.execute("ROLLBACK")

    @contextmanager
    def seeing_pending(self) -> Iterator[None]:
        """Inside the block, reads of a table this run has staged upserts for see those rows too (a
        later step of the run reads what an earlier one fetched): each such table is shadowed by a
        temporary view of the lake's rows and the staged rows, cast to the table's types. Both copies
        of a key may show: for the sets of ids and codes such reads collect, that is what is wanted."""
        shadowed: list[str] = []
        try:
            for table in dict.fromkeys(w.joins.table for w in self._writes if w.joins is not None and w.joins.kind == "upsert"):
                types = sql_types(table)
                parts = [f"SELECT * FROM {ident(self.alias)}.{ident(self.location.schema)}.{ident(table)}"]
                for rows in self._pending_rows(table):
                    casts = ", ".join(cast_column(c, types[c]) for c in rows.schema.names if c in types)
                    parts.append(f"SELECT {casts} FROM {rows.relation}")
                self.con.execute(f"CREATE OR REPLACE TEMP VIEW {ident(table)} AS {' UNION ALL BY NAME '.join(parts)}")
                shadowed.append(table)
            yield
        finally:
            for table in shadowed:
                with suppress(duckdb.Error):
                    self.con.execute(f"DROP VIEW IF EXISTS temp.main.{ident(table)}")

    def discard(self) -> None:
        """Forget every staged write (a run that failed commits only its ledger row) and remove the
        files that held their rows."""
        self._writes.clear()
        self._barrier = 0
        self._staged_tables.clear()
        self._files.clear()

    def close(self) -> None:
        """Remove the run's staged files (whether or not it committed) and close the stager."""
        self._files.clear()
        self.stager.close()

    # -- commit --------------------------------------------------------------------------------

    def commit(
        self,
        message: CommitMessage,
        *,
        last: Finish | None = None,
        deadline_s: float = DEFAULT_COMMIT_DEADLINE_S,
    ) -> Committed:
        """Replay the staged writes (then `last`, e.g. the ledger row) in one transaction and commit
        it as one snapshot; redone from the staged rows when another writer committed first."""
        self._writable()
        if not self._writes and last is None:
            return Committed(None, {}, 0)
        # Arrow's pool keeps what staging's batches freed for the next batch; the merges need it more,
        # so it goes back before they start.
        pa.default_memory_pool().release_unused()
        started = time.monotonic()
        delay = 0.05
        for attempt in itertools.count(1):
            try:
                snapshot_id, counts = self._attempt(message, last)
            except _Raced as raced:
                waited = time.monotonic() - started
                if waited >= deadline_s:
                    raise WarehouseBusyError(
                        f"could not commit run {message.run_id} ({message.flow}) in {waited:.0f} s: "
                        f"{self._writers_since(raced.base)} committed to {self.location.describe()} meanwhile; "
                        "its writes were not committed, re-run it"
                    ) from None
                time.sleep(min(delay, max(0.0, deadline_s - waited)) * random.uniform(0.5, 1.0))
                delay = min(delay * 2, 5.0)
                continue
            self.discard()
            return Committed(snapshot_id, counts, attempt)
        raise AssertionError("unreachable")

    def _attempt(self, message: CommitMessage, last: Finish | None) -> tuple[int, dict[str, TableCounts]]:
        con = self.con
        con.execute("BEGIN TRANSACTION")
        base = -1
        try:
            row = con.execute("SELECT id FROM ducklake_current_snapshot(?)", [self.alias]).fetchone()
            base = int(row[0]) if row else 0
            commit = CommitContext(snapshot_id=base + 1, committed_at=datetime.now(UTC), run_id=message.run_id)
            per_write = [dict(write.replay(con, commit) or {}) for write in self._writes]
            if last is not None:
                last(con, commit, per_write)
            counts: dict[str, TableCounts] = {}
            for done in per_write:
                for table, table_counts in done.items():
                    counts.setdefault(table, TableCounts()).add(table_counts)
            extra = redact(dumps({"flow": message.flow, "run_id": message.run_id, **message.extra}))
            con.execute(
                f"CALL {ident(self.alias)}.set_commit_message('shipsync', ?, extra_info => ?)", [f"{message.flow} {message.run_id}", extra]
            )
        except BaseException:
            with suppress(duckdb.Error):
                con.execute("ROLLBACK")
            raise
        try:
            con.execute("COMMIT")
        except duckdb.Error as exc:
            with suppress(duckdb.Error):
                con.execute("ROLLBACK")
            if lost_a_race(exc):
                log.info("commit of run %s raced another writer; replaying it on the newer snapshot", message.run_id)
                raise _Raced(base) from None
            reason = " ".join(str(exc).split())  # DuckDB's message spans lines: one line here
            raise WarehouseError(f"cannot commit to {self.location.describe()}: {redact(reason)}") from None
        return commit.snapshot_id, counts

    def _writers_since(self, base: int) -> str:
        try:
            rows = self.con.execute(
                "SELECT coalesce(commit_message, 'a commit without a message'), snapshot_time FROM ducklake_snapshots(?) "
                "WHERE snapshot_id > ? ORDER BY snapshot_id DESC LIMIT 3",
                [self.alias, base],
            ).fetchall()
        except duckdb.Error:
            return "other writers"
        if not rows:
            return "other writers"
        named = "; ".join(f"{redact(str(text))} at {moment:%H:%M:%S}" for text, moment in rows)
        return f"other writers (latest: {named})"


class _Raced(Exception):
    def __init__(self, base: int) -> None:
        super().__init__(base)
        self.base = base


@contextmanager
def open_warehouse(location: LakeLocation, *, read_only: bool = False, single_threaded: bool = False) -> Iterator[Warehouse]:
    """The lake at `location` on a new connection (a writer creates its tables and views first, and
    gets a private stage; `single_threaded`: see `lake.connect_lake`); closed on exit, committing
    nothing: commits are explicit (`Warehouse.commit`), so leaving a block never writes anything.
    Staged files are removed."""
    lake = connect_lake(location, read_only=read_only, single_threaded=single_threaded)
    warehouse: Warehouse | None = None
    try:
        if not read_only:
            ensure_schema(lake.con, lake.alias, location.schema)
        warehouse = Warehouse(lake, location, read_only=read_only)
        yield warehouse
    finally:
        if warehouse is not None:
            warehouse.close()
        lake.close()
