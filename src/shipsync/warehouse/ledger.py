"""The run ledger (`sync_runs`): a row when a run starts, completed when it ends, never a secret."""

from __future__ import annotations

import sys
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

import duckdb

from shipsync.api.transport import ClientStats
from shipsync.json_text import dumps
from shipsync.redaction import redact
from shipsync.warehouse import changes
from shipsync.warehouse.connection import connect
from shipsync.warehouse.upsert import TableCounts


def prefect_flow_run_id() -> str | None:
    """The Prefect flow run this code runs in, if any (one flow run may hold several runs)."""
    if "prefect" not in sys.modules:  # no flow run without Prefect; importing it costs 2-4 s
        return None
    try:
        from prefect.runtime import flow_run

        run_id = flow_run.id
    except Exception:  # outside Prefect there is simply no flow run
        return None
    return str(run_id) if run_id else None


# completed_with_errors: some ids were not found or given up after every retry.
RunStatus = Literal["completed", "completed_with_errors", "failed"]


@dataclass
class RunRecord:
    """What a run did, filled in as it goes and written when it ends."""

    run_id: str
    flow: str
    parameters: dict[str, Any]
    started_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    stats: ClientStats = field(default_factory=ClientStats)
    counts: dict[str, TableCounts] = field(default_factory=dict)
    not_found: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

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


def _record(con: duckdb.DuckDBPyConnection, run_id: str) -> None:
    """Log the run's row for publishing (autocommit: the entry before the row is harmless)."""
    changes.record_rows(con, "sync_runs", "SELECT ?::VARCHAR AS run_id", [run_id])


def start_run(warehouse: Path, flow: str, parameters: Mapping[str, Any]) -> RunRecord:
    record = RunRecord(run_id=str(uuid.uuid4()), flow=flow, parameters=dict(parameters))
    with connect(warehouse, brief=True, records_changes=True) as con:
        _record(con, record.run_id)
        con.execute(
            "INSERT INTO sync_runs (run_id, flow, prefect_flow_run_id, parameters, started_at, status) VALUES (?, ?, ?, ?, ?, 'running')",
            [record.run_id, flow, prefect_flow_run_id(), redact(dumps(record.parameters)), record.started_at],
        )
    return record


def finish_run(warehouse: Path, record: RunRecord, status: RunStatus) -> None:
    with connect(warehouse, brief=True, records_changes=True) as con:
        _record(con, record.run_id)
        con.execute(
            "UPDATE sync_runs SET finished_at = ?, status = ?, requests = ?, throttled = ?, retries = ?, "
            "table_counts = ?, not_found = ?, errors = ?, parameters = ? WHERE run_id = ?",
            [
                datetime.now(UTC),
                status,
                record.stats.requests,
                record.stats.throttled,
                record.stats.retries,
                redact(dumps(record.counts_dict())),
                record.not_found,
                [redact(e) for e in record.errors],
                redact(dumps(record.parameters)),  # a run may add what it learnt (an incremental pull's mark)
                record.run_id,
            ],
        )


# Clocks differ and updates land while a run pages: an incremental read starts a little before the
# last successful one did.
SINCE_OVERLAP = timedelta(minutes=5)


def apply_flows(kind: str) -> tuple[str, str]:
    """The ledger's name for a bulk apply of `kind` (`apply_tracking_requests`), then the name runs
    had before flow names took one style (`apply_tracking-requests`), which older ledgers hold."""
    return "apply_" + kind.replace("-", "_"), f"apply_{kind}"


def record_inner_run(con: duckdb.DuckDBPyConnection, flow: str, requests: int) -> None:
    """A completed run row for work done within another run, in that run's transaction (a
    refresh of definitions during an apply), so later runs can tell when it last happened."""
    run_id, now = str(uuid.uuid4()), datetime.now(UTC)
    _record(con, run_id)
    con.execute(
        "INSERT INTO sync_runs (run_id, flow, started_at, finished_at, status, requests) VALUES (?, ?, ?, ?, 'completed', ?)",
        [run_id, flow, now, now, requests],
    )


def last_started(warehouse: Path, flows: Sequence[str], statuses: Sequence[RunStatus] | None = None) -> datetime | None:
    """When the last run of any of `flows` started, among those that ended in one of `statuses`
    (any run when None); None if there is none, or no warehouse yet."""
    if not Path(warehouse).exists():
        return None
    with connect(warehouse, records_changes=True) as con:  # reads only
        row = con.execute(
            "SELECT max(started_at) FROM sync_runs WHERE list_contains(?, flow) AND (? OR list_contains(?, status))",
            [list(flows), statuses is None, list(statuses or ())],
        ).fetchone()
    return row[0] if row and row[0] is not None else None


def last_success(warehouse: Path, *flows: str) -> datetime | None:
    """When the last successful run of any of `flows` started (None if never, or no warehouse yet)."""
    return last_started(warehouse, flows, ("completed", "completed_with_errors"))


def since_text(moment: datetime) -> str:
    """A moment as the service's `updated_since` filter takes it."""
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def changed_since(warehouse: Path, *flows: str) -> str | None:
    """Where an incremental read after `flows` starts: their last successful start less the
    overlap (None: never read, so read everything)."""
    last = last_success(warehouse, *flows)
    return since_text(last - SINCE_OVERLAP) if last else None


def last_success_parameter(warehouse: Path, flow: str, name: str) -> str | None:
    """Parameter `name` of the latest successful run of `flow` that has it (a mark a run left for
    the next one); None if none has, or no warehouse yet."""
    if not Path(warehouse).exists():
        return None
    with connect(warehouse, records_changes=True) as con:  # reads only
        row = con.execute(
            "SELECT json_extract_string(parameters, ?) AS value FROM sync_runs "
            "WHERE flow = ? AND status IN ('completed', 'completed_with_errors') AND value IS NOT NULL "
            "ORDER BY started_at DESC LIMIT 1",
            [f"$.{name}", flow],
        ).fetchone()
    return str(row[0]) if row else None
