"""The run ledger (`sync_runs`): a row when a run starts, completed when it ends, never a secret."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import orjson

from shipsync.api.transport import ClientStats
from shipsync.redaction import redact
from shipsync.warehouse import changes
from shipsync.warehouse.connection import connect
from shipsync.warehouse.upsert import TableCounts


def prefect_flow_run_id() -> str | None:
    """The Prefect flow run this code runs in, if any (one flow run may hold several runs)."""
    try:
        from prefect.runtime import flow_run

        run_id = flow_run.id
    except Exception:  # outside Prefect there is simply no flow run
        return None
    return str(run_id) if run_id else None


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


def _json(value: Any) -> str:
    return redact(orjson.dumps(value, option=orjson.OPT_SORT_KEYS, default=str).decode())


def _record(con: duckdb.DuckDBPyConnection, run_id: str) -> None:
    """Log the run's row for publishing (autocommit: the entry before the row is harmless)."""
    changes.record_rows(con, "sync_runs", "SELECT ?::VARCHAR AS run_id", [run_id])


def start_run(warehouse: Path, flow: str, parameters: Mapping[str, Any]) -> RunRecord:
    record = RunRecord(run_id=str(uuid.uuid4()), flow=flow, parameters=dict(parameters))
    with connect(warehouse, brief=True, records_changes=True) as con:
        _record(con, record.run_id)
        con.execute(
            "INSERT INTO sync_runs (run_id, flow, prefect_flow_run_id, parameters, started_at, status) VALUES (?, ?, ?, ?, ?, 'running')",
            [record.run_id, flow, prefect_flow_run_id(), _json(record.parameters), record.started_at],
        )
    return record


def finish_run(warehouse: Path, record: RunRecord, status: str) -> None:
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
                _json(record.counts_dict()),
                record.not_found,
                [redact(e) for e in record.errors],
                _json(record.parameters),  # a run may add what it learnt (an incremental pull's mark)
                record.run_id,
            ],
        )


def last_success(warehouse: Path, flow: str) -> datetime | None:
    """When the last successful run of `flow` started (None if never, or no warehouse yet)."""
    if not Path(warehouse).exists():
        return None
    with connect(warehouse, records_changes=True) as con:  # reads only
        row = con.execute(
            "SELECT max(started_at) FROM sync_runs WHERE flow = ? AND status IN ('completed', 'completed_with_errors')",
            [flow],
        ).fetchone()
    return row[0] if row and row[0] is not None else None


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
