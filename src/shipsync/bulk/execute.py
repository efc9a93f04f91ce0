"""Performing planned writes through the client (and so its rate limiter), concurrently.

One writer per target (`Change.target`). Definitions go first, then options, then everything
else, so values can use what the same run defined. A write whose answer was lost is `unknown` and
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
    change.payload["resource"] = answered(updated.raw, {"ref_number": change.after})


WRITERS: dict[Target, Callable[[AsyncShipsyncClient, Change], Awaitable[None]]] = {
    "custom_field": write_custom_field,
    "shipment": write_shipment,
    "tracking_request": write_tracking_request,
    "definition": write_definition,
    "option": write_option,
}
PHASES: tuple[tuple[Target, ...], ...] = (("definition",), ("option",), ("custom_field", "shipment", "tracking_request"))


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


async def _run(client: AsyncShipsyncClient, changes: Sequence[Change], on_written: Callable[[int], None]) -> ClientStats:
    for phase in PHASES:
        await asyncio.gather(*(_one(client, c, on_written) for c in changes if c.target in phase))
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
