"""The run ledger (`sync_runs`): a row when a run starts, completed when it ends, never a secret;
`ledger_run` wraps any run (a pull, a bulk apply, an undo, a webhook registration) in one, then
publishes what it changed for analysts (the run is the outermost `publishing` scope)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

import duckdb

from shipsync.api.transport import ClientStats
from shipsync.config import Settings
from shipsync.errors import AuthenticationError
from shipsync.json_text import dumps
from shipsync.redaction import redact
from shipsync.warehouse import changes
from shipsync.warehouse.connection import connect
from shipsync.warehouse.publishing import publishing
from shipsync.warehouse.upsert import TableCounts

# Every kind of run the ledger records; the Prefect flows that run them carry the same names. Reads
# of the ledger take any string: older ledgers hold names from before the names took one style.
FlowName = Literal[
    "pull_documents",
    "pull_metro_areas",
    "pull_document_schemas",
    "pull_places",
    "pull_shipments",
    "pull_containers",
    "pull_shipping_lines",
    "pull_tracking_requests",
    "apply_tracking_requests",
    "apply_custom_field_definitions",
    "apply_custom_fields",
    "apply_undo",
    "refresh_definitions",
    "register_webhook",
    "delete_webhook",
]
APPLY_FLOWS: dict[str, FlowName] = {
    "tracking-requests": "apply_tracking_requests",
    "custom-field-definitions": "apply_custom_field_definitions",
    "custom-fields": "apply_custom_fields",
}

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


def start_run(warehouse: Path, flow: FlowName, parameters: Mapping[str, Any], flow_run_id: str | None = None) -> RunRecord:
    """The run's row, `running`; `flow_run_id`: the Prefect flow run it is part of (one may hold several)."""
    record = RunRecord(run_id=str(uuid.uuid4()), flow=flow, parameters=dict(parameters))
    with connect(warehouse, brief=True, records_changes=True) as con:
        _record(con, record.run_id)
        con.execute(
            "INSERT INTO sync_runs (run_id, flow, prefect_flow_run_id, parameters, started_at, status) VALUES (?, ?, ?, ?, ?, 'running')",
            [record.run_id, flow, flow_run_id, redact(dumps(record.parameters)), record.started_at],
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


def apply_flows(kind: str) -> tuple[FlowName, str]:
    """The ledger's name for a bulk apply of `kind` (`apply_tracking_requests`), then the name runs
    had before flow names took one style (`apply_tracking-requests`), which older ledgers hold."""
    return APPLY_FLOWS[kind], f"apply_{kind}"


def record_inner_run(con: duckdb.DuckDBPyConnection, flow: FlowName, requests: int) -> None:
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


@contextmanager
def ledger_run(settings: Settings, flow: FlowName, parameters: Mapping[str, Any]) -> Iterator[RunRecord]:
    """Record the run in `sync_runs`: completed, completed_with_errors (404s, ids given up) or failed.

    A missing API key fails before anything is written. Analysts see the run's writes at its end.
    """
    settings.require_api_key()
    with publishing(settings.warehouse), _recorded(settings, flow, parameters) as record:
        yield record


@contextmanager
def _recorded(settings: Settings, flow: FlowName, parameters: Mapping[str, Any]) -> Iterator[RunRecord]:
    warehouse = settings.warehouse
    record = start_run(warehouse, flow, parameters, settings.flow_run_id)
    try:
        yield record
    except AuthenticationError as exc:
        record.errors.append(redact(str(exc)))
        finish_run(warehouse, record, "failed")
        raise
    except BaseException as exc:
        record.errors.append(redact(f"{type(exc).__name__}: {exc}"))
        finish_run(warehouse, record, "failed")
        raise
    finish_run(warehouse, record, "completed_with_errors" if record.errors or record.not_found else "completed")
