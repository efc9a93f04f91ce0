"""Performing planned writes through the client (and so its rate limiter), concurrently.

One writer per target (`Change.target`). Definitions go first, then options, then values and
shipments, then tracking requests, so values can use what the same run defined. A write whose answer was lost is `unknown` and
never resent here; the next run re-reads the service and finds it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import httpx

from shipsync.api import AsyncShipsyncClient, run_with_client
from shipsync.api.transport import ClientStats
from shipsync.bulk.model import Change, Target
from shipsync.bulk.write_definitions import answered, write_definition, write_option
from shipsync.bulk.write_fields import write_custom_field
from shipsync.config import Settings
from shipsync.errors import ApiError, AuthenticationError, OutcomeUnknownError
from shipsync.redaction import redact

WRITE_ACTIONS = ("create", "update", "delete")


def _refused(exc: ApiError) -> str:
    return redact("; ".join(e.describe() for e in exc.errors) or str(exc))


def reverse_delta(current: list[str], applied: list[str], restored: list[str]) -> list[str]:
    """Undo of a list edit against the list as it is now: take out what the edit added, put back
    what it removed, and leave alone whatever someone else changed since."""
    added = [v for v in applied if v not in restored]
    removed = [v for v in restored if v not in applied]
    kept = [v for v in current if v not in added]
    return kept + [v for v in removed if v not in kept]


async def write_shipment(client: AsyncShipsyncClient, change: Change) -> None:
    wanted: list[str] = list(change.after or [])
    if change.payload.get("delta"):  # an undo: against the shipment's list as it is now
        current = getattr(await client.shipments.get(change.entity_id), change.field)
        if current is None:
            raise ApiError(f"the service did not say the shipment's current {change.field}; not changed")
        wanted = reverse_delta(current, list(change.before or []), wanted)
        change.after = wanted
    shipment = await client.shipments.update(change.entity_id, **{change.field: wanted})
    change.payload["resource"] = answered(shipment.raw, {change.field: wanted})


async def write_tracking_request(client: AsyncShipsyncClient, change: Change) -> None:
    updated = await client.tracking_requests.update(change.entity_id, ref_number=change.after)
    # The answer shows the number in `ref_numbers`; where it is silent, what was there and the number.
    shown = updated.ref_numbers if updated.ref_numbers is not None else [*(change.before or []), change.after]
    change.payload["resource"] = answered(updated.raw, {"ref_numbers": shown})


WRITERS: dict[Target, Callable[[AsyncShipsyncClient, Change], Awaitable[None]]] = {
    "custom_field": write_custom_field,
    "shipment": write_shipment,
    "tracking_request": write_tracking_request,
    "definition": write_definition,
    "option": write_option,
}
# A request's `ref_number` joins its shipment's reference numbers: it is written after the
# shipment's own lists, or a list written after it would take it out again.
PHASES: tuple[tuple[Target, ...], ...] = (("definition",), ("option",), ("custom_field", "shipment"), ("tracking_request",))


async def _one(client: AsyncShipsyncClient, change: Change, on_written: Callable[[int], None]) -> None:
    try:
        await WRITERS[change.target](client, change)
        change.status = "applied"
    except AuthenticationError:
        raise
    except OutcomeUnknownError as exc:
        change.status, change.detail = "unknown", redact(f"sent, outcome unknown ({exc}); the next run reconciles it")
    except ApiError as exc:
        change.status, change.detail = "failed", _refused(exc)
    on_written(1)


async def _in_turn(client: AsyncShipsyncClient, changes: Sequence[Change], on_written: Callable[[int], None]) -> None:
    for change in changes:
        await _one(client, change, on_written)


async def _run(client: AsyncShipsyncClient, changes: Sequence[Change], on_written: Callable[[int], None]) -> ClientStats:
    """Each phase's writes at once, except those to one record: in turn, in the order given (two
    edits of a shipment's list, each read against the list as it is, would overwrite each other)."""
    for phase in PHASES:
        by_record: dict[tuple[str, str], list[Change]] = {}
        for change in changes:
            if change.target in phase:
                by_record.setdefault((change.target, change.entity_id), []).append(change)
        await asyncio.gather(*(_in_turn(client, record, on_written) for record in by_record.values()))
    return client.stats


def execute(
    settings: Settings,
    changes: Sequence[Change],
    *,
    http_transport: httpx.AsyncBaseTransport | None = None,
    on_written: Callable[[int], None] = lambda n: None,
) -> ClientStats:
    """Send every create/update/delete in `changes`, setting each one's status and detail;
    `on_written(1)` hears of each write finished (applied, failed or unknown)."""
    todo = [c for c in changes if c.action in WRITE_ACTIONS]
    if not todo:
        return ClientStats()
    return run_with_client(settings.client_options(), lambda client: _run(client, todo, on_written), http_transport=http_transport)


def as_undo(change: Change) -> dict[str, Any]:
    """The before-image row of an applied change."""
    return {
        "entity_type": change.entity_type,
        "entity_id": change.entity_id,
        "field": change.field,
        "action": change.action,
        "resource_id": change.resource_id,
        "before": change.before,
        "after": change.after,
    }
