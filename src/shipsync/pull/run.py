"""One pull run: a ledger row at start, counts and outcome at the end, whatever happens between."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from shipsync.config import Settings
from shipsync.errors import AuthenticationError
from shipsync.redaction import redact
from shipsync.warehouse.ledger import RunRecord, finish_run, start_run

RunHook = Callable[[RunRecord], None]


@contextmanager
def ledger_run(settings: Settings, flow: str, parameters: Mapping[str, Any]) -> Iterator[RunRecord]:
    """Record the run in `sync_runs`: completed, completed_with_errors (404s, ids given up) or failed.

    A missing API key fails before anything is written.
    """
    settings.require_api_key()
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
