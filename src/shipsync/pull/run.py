"""One run: a ledger row at start, counts and outcome at the end, whatever happens between; then
one publish of what it changed for analysts (the run is the outermost `publishing` scope)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from shipsync.config import Settings
from shipsync.errors import AuthenticationError
from shipsync.redaction import redact
from shipsync.warehouse.ledger import RunRecord, finish_run, start_run
from shipsync.warehouse.publishing import publishing


@contextmanager
def ledger_run(settings: Settings, flow: str, parameters: Mapping[str, Any]) -> Iterator[RunRecord]:
    """Record the run in `sync_runs`: completed, completed_with_errors (404s, ids given up) or failed.

    A missing API key fails before anything is written. Analysts see the run's writes at its end.
    """
    settings.require_api_key()
    with publishing(settings.warehouse), _recorded(settings, flow, parameters) as record:
        yield record


@contextmanager
def _recorded(settings: Settings, flow: str, parameters: Mapping[str, Any]) -> Iterator[RunRecord]:
    warehouse = settings.warehouse
    record = start_run(warehouse, flow, parameters)
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
