"""Performing planned writes through the client (and so its rate limiter), concurrently.

The kind writes each change (`BulkKind.write`) in the phase it names: every change of one phase
before any of the next (definitions before the options of a new one, a shipment's lists before a
request's `ref_number`). A write whose answer was lost is `unknown` and never resent here; the next
run re-reads the service and finds it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

import httpx

from shipsync.api import AsyncShipsyncClient, run_with_client
from shipsync.api.transport import ClientStats
from shipsync.bulk.kind import BulkKind
from shipsync.bulk.model import WRITE_ACTIONS, Change
from shipsync.config import Settings
from shipsync.errors import ApiError, AuthenticationError, OutcomeUnknownError
from shipsync.redaction import redact


def refused(exc: ApiError) -> str:
    """What the service said in refusing a write: each error with the member it points at."""
    return redact("; ".join(e.describe() for e in exc.errors) or str(exc))


async def _one(client: AsyncShipsyncClient, kind: BulkKind, change: Change, on_written: Callable[[int], None]) -> None:
    try:
        await kind.write(client, change)
        change.status = "applied"
    except AuthenticationError:
        raise
    except OutcomeUnknownError as exc:
        change.status, change.detail = "unknown", redact(f"sent, outcome unknown ({exc}); the next run reconciles it")
    except ApiError as exc:
        change.status, change.detail = "failed", refused(exc)
    on_written(1)


async def _in_turn(client: AsyncShipsyncClient, kind: BulkKind, changes: Sequence[Change], on_written: Callable[[int], None]) -> None:
    for change in changes:
        await _one(client, kind, change, on_written)


async def _run(client: AsyncShipsyncClient, kind: BulkKind, changes: Sequence[Change], on_written: Callable[[int], None]) -> ClientStats:
    """Each phase's writes at once, except those to one record: in turn, in the order given (two
    edits of a shipment's list, each read against the list as it is, would overwrite each other)."""
    for phase in sorted({kind.phase(c) for c in changes}):
        by_record: dict[tuple[str, str], list[Change]] = {}
        for change in changes:
            if kind.phase(change) == phase:
                by_record.setdefault((change.entity_type, change.entity_id), []).append(change)
        await asyncio.gather(*(_in_turn(client, kind, record, on_written) for record in by_record.values()))
    return client.stats


def execute(
    settings: Settings,
    kind: BulkKind,
    changes: Sequence[Change],
    *,
    http_transport: httpx.AsyncBaseTransport | None = None,
    on_written: Callable[[int], None] = lambda n: None,
) -> ClientStats:
    """Send every create/update/delete in `changes` (of `kind`), setting each one's status and
    detail; `on_written(1)` hears of each write finished (applied, failed or unknown)."""
    todo = [c for c in changes if c.action in WRITE_ACTIONS]
    if not todo:
        return ClientStats()
    return run_with_client(settings.client_options(), lambda client: _run(client, kind, todo, on_written), http_transport=http_transport)
