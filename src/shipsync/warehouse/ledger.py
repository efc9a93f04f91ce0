"""Runs and the run ledger (`sync_runs`).

`warehouse_run` is how anything that writes the warehouse runs (a pull, `pull all`, a bulk apply,
an undo, `events load`, `events catch-up`, a webhook registration): it opens the lake once
(`Warehouse`), and its `step`s each add a ledger row; when the run ends, its writes and its ledger
rows are committed together as one snapshot whose commit message names the run. Each ledger row records that
snapshot's id. A run that fails commits its ledger rows only (status `failed`, its error kept):
none of its writes, whatever step they came from. A missing API key fails before anything is
written. Ledger rows never hold a secret (parameters and errors are redacted).

The ledger's reads (where an incremental read starts, when something last succeeded) read the
lake as committed.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

import duckdb
import pyarrow as pa

from shipsync.api.transport import ClientStats
from shipsync.errors import AuthenticationError
from shipsync.json_text import dumps
from shipsync.redaction import redact
from shipsync.warehouse.identifiers import ident
from shipsync.warehouse.unit_of_work import CommitContext, CommitMessage, Committed, Warehouse, open_warehouse
from shipsync.warehouse.upsert import TableCounts, add_counts
from shipsync.warehouse_location import LakeLocation

# A kind of run, as the ledger records it (`sync_runs.flow`) and its Prefect flow is named. The
# layers that run things declare their names (`pull.resources`, the spreadsheet kinds, the event
# log's runs) and hand them down: the ledger takes any.
FlowName = str

# completed_with_errors: some ids were not found or given up after every retry.
RunStatus = Literal["completed", "completed_with_errors", "failed"]


@dataclass
class RunRecord:
    """What a run (or a step of one) did, filled in as it goes and written when the run commits."""

    run_id: str
    flow: str
    parameters: dict[str, Any]
    started_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    finished_at: datetime | None = None
    status: RunStatus | None = None
    stats: ClientStats = field(default_factory=ClientStats)
    counts: dict[str, TableCounts] = field(default_factory=dict)
    not_found: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    snapshot_id: int | None = None
    # The staged writes that are this record's (their commit counts become its `counts`).
    writes: range = range(0)

    def add_stats(self, stats: ClientStats) -> None:
        self.stats.requests += stats.requests
        self.stats.throttled += stats.throttled
        self.stats.retries += stats.retries

    def counts_dict(self) -> dict[str, dict[str, int]]:
        return {name: c.as_dict() for name, c in sorted(self.counts.items())}

    def totals(self) -> TableCounts:
        total = TableCounts()
        for c in self.counts.values():
            total.add(c)
        return total

    def finish(self, status: RunStatus) -> None:
        self.status = status
        self.finished_at = datetime.now(UTC)

    def outcome(self) -> RunStatus:
        return "completed_with_errors" if self.errors or self.not_found else "completed"


_LEDGER_COLUMNS = (
    "run_id",
    "flow",
    "snapshot_id",
    "prefect_flow_run_id",
    "parameters",
    "started_at",
    "finished_at",
    "status",
    "requests",
    "throttled",
    "retries",
    "table_counts",
    "not_found",
    "errors",
)


def _ledger_rows(records: Sequence[RunRecord], snapshot_id: int, flow_run: str | None) -> pa.Table:
    rows = [
        (
            r.run_id,
            r.flow,
            snapshot_id,
            flow_run,
            redact(dumps(r.parameters)),
            r.started_at,
            r.finished_at or datetime.now(UTC),
            r.status or "failed",
            r.stats.requests,
            r.stats.throttled,
            r.stats.retries,
            redact(dumps(r.counts_dict())),
            list(r.not_found),
            [redact(e) for e in r.errors],
        )
        for r in records
    ]
    columns: list[tuple[Any, ...]] = list(zip(*rows, strict=True)) if rows else [() for _ in _LEDGER_COLUMNS]
    types = {"snapshot_id": pa.int64(), "requests": pa.int64(), "throttled": pa.int64(), "retries": pa.int64()}
    arrays = {
        name: pa.array(list(values), type=types.get(name, pa.list_(pa.string()) if name in ("not_found", "errors") else None))
        for name, values in zip(_LEDGER_COLUMNS, columns, strict=True)
    }
    return pa.table(arrays)


class WarehouseRun:
    """One run's hold on the warehouse and its ledger records (see the module's docstring)."""

    def __init__(self, warehouse: Warehouse, flow: FlowName, parameters: Mapping[str, Any], flow_run_id: str | None = None) -> None:
        self.warehouse = warehouse
        self.flow = flow
        self.parameters = dict(parameters)
        self.flow_run_id = flow_run_id  # the Prefect flow run this run is part of, if any
        self.run_id = str(uuid.uuid4())
        self.records: list[RunRecord] = []
        self.committed: Committed | None = None

    @property
    def con(self) -> duckdb.DuckDBPyConnection:
        return self.warehouse.con

    @contextmanager
    def step(self, flow: FlowName, parameters: Mapping[str, Any]) -> Iterator[RunRecord]:
        """A ledger row for this part of the run: completed, completed_with_errors (404s, ids given
        up) or failed (then the whole run fails). Its counts are the commit's counts of what it staged."""
        record = RunRecord(run_id=self.run_id if not self.records else str(uuid.uuid4()), flow=flow, parameters=dict(parameters))
        self.records.append(record)
        start = self.warehouse.mark()
        try:
            yield record
        except AuthenticationError as exc:
            record.errors.append(redact(str(exc)))
            record.finish("failed")
            raise
        except BaseException as exc:
            record.errors.append(redact(f"{type(exc).__name__}: {exc}"))
            record.finish("failed")
            raise
        finally:
            record.writes = range(start, self.warehouse.mark())
        if record.status is None:
            record.finish(record.outcome())

    def inner_run(self, flow: FlowName, requests: int) -> None:
        """A completed ledger row for work done within this run (a refresh of definitions during an
        apply), so later runs can tell when it last happened."""
        record = RunRecord(run_id=str(uuid.uuid4()), flow=flow, parameters={})
        record.stats.requests = requests
        record.finish("completed")
        self.records.append(record)

    def commit(self) -> Committed:
        """Commit the staged writes and the ledger rows as one snapshot (see `Warehouse.commit`)."""
        flow_run = self.flow_run_id
        records = list(self.records)

        def ledger(con: duckdb.DuckDBPyConnection, commit: CommitContext, per_write: Sequence[Mapping[str, TableCounts]]) -> None:
            # Each record's counts are the commit's counts of its writes (every replay starts afresh).
            for record in records:
                record.counts = {}
                for index in record.writes:
                    add_counts(record.counts, per_write[index])
            con.register("_shipsync_ledger", _ledger_rows(records, commit.snapshot_id, flow_run))
            try:
                listed = ", ".join(ident(c) for c in _LEDGER_COLUMNS)
                con.execute(
                    f"INSERT INTO sync_runs ({listed}) SELECT run_id, flow, snapshot_id, prefect_flow_run_id, CAST(parameters AS JSON), "
                    "started_at, finished_at, status, requests, throttled, retries, CAST(table_counts AS JSON), not_found, errors "
                    "FROM _shipsync_ledger"
                )
            finally:
                con.unregister("_shipsync_ledger")

        message = CommitMessage(self.flow, self.run_id, {"prefect_flow_run_id": flow_run, "parameters": self.parameters})
        committed = self.warehouse.commit(message, last=ledger)
        for record in records:
            record.snapshot_id = committed.snapshot_id
        self.committed = committed
        return committed


@contextmanager
def warehouse_run(
    location: LakeLocation,
    flow: FlowName,
    parameters: Mapping[str, Any],
    *,
    flow_run_id: str | None = None,
    single_threaded: bool = False,
) -> Iterator[WarehouseRun]:
    """Open the warehouse for one run, yield it, and commit it as one snapshot when it ends
    (`flow_run_id`: the Prefect flow run it is part of, recorded in its ledger rows;
    `single_threaded`: a run that moves a few rows, see `lake.connect_lake`). A run that fails
    commits its ledger rows only, then its error goes on; one that fails before any step began (a
    file that names nothing to do) commits nothing."""
    with open_warehouse(location, single_threaded=single_threaded) as warehouse:
        run = WarehouseRun(warehouse, flow, parameters, flow_run_id)
        try:
            yield run
        except BaseException as exc:
            warehouse.discard()
            if run.records:
                for record in run.records:
                    record.writes = range(0)  # none of them is committed
                    if record.status != "failed":
                        record.errors.append(redact(f"not committed: the run failed ({type(exc).__name__}: {exc})"))
                        record.finish("failed")
                run.commit()
            raise
        if run.committed is None:  # a run may commit before its end (to read a source it holds open)
            for record in run.records:
                if record.status is None:
                    record.finish(record.outcome())
            run.commit()


# Clocks differ and updates land while a run pages: an incremental read starts a little before the
# last successful one did.
SINCE_OVERLAP = timedelta(minutes=5)


def last_started(con: duckdb.DuckDBPyConnection, flows: Sequence[str], statuses: Sequence[RunStatus] | None = None) -> datetime | None:
    """When the last run of any of `flows` started, among those that ended in one of `statuses`
    (any run when None); None if there is none."""
    row = con.execute(
        "SELECT max(started_at) FROM sync_runs WHERE list_contains(?, flow) AND (? OR list_contains(?, status))",
        [list(flows), statuses is None, list(statuses or ())],
    ).fetchone()
    return row[0] if row and row[0] is not None else None


def last_success(con: duckdb.DuckDBPyConnection, *flows: str) -> datetime | None:
    """When the last successful run of any of `flows` started (None if never)."""
    return last_started(con, flows, ("completed", "completed_with_errors"))


def since_text(moment: datetime) -> str:
    """A moment as the service's `updated_since` filter takes it."""
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def changed_since(con: duckdb.DuckDBPyConnection, *flows: str) -> str | None:
    """Where an incremental read after `flows` starts: their last successful start less the
    overlap (None: never read, so read everything)."""
    last = last_success(con, *flows)
    return since_text(last - SINCE_OVERLAP) if last else None


def last_success_parameter(con: duckdb.DuckDBPyConnection, flow: str, name: str) -> str | None:
    """Parameter `name` of the latest successful run of `flow` that has it (a mark a run left for
    the next one); None if none has."""
    row = con.execute(
        "SELECT json_extract_string(parameters, ?) AS value FROM sync_runs "
        "WHERE flow = ? AND status IN ('completed', 'completed_with_errors') AND value IS NOT NULL "
        "ORDER BY started_at DESC LIMIT 1",
        [f"$.{name}", flow],
    ).fetchone()
    return str(row[0]) if row else None
