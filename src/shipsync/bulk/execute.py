"""Performing planned writes through the client (and so its rate limiter), concurrently.

A create whose answer was lost is `unknown` and never resent here; the next run re-reads the
service and finds it (or the service's duplicate refusal tells us it exists, and we patch it).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from shipsync.api import AsyncShipsyncClient
from shipsync.api.jsonapi import JsonObject
from shipsync.api.models import CustomField
from shipsync.api.transport import ClientStats
from shipsync.bulk.model import Change
from shipsync.config import Settings
from shipsync.errors import ApiError, AuthenticationError, NotFoundError, OutcomeUnknownError, ValidationError
from shipsync.redaction import redact

WRITE_ACTIONS = ("create", "update", "delete")


def _refused(exc: ApiError) -> str:
    return redact("; ".join(e.describe() for e in exc.errors) or str(exc))


def resource_of(value: CustomField) -> JsonObject:
    """A custom field model back in its wire form, for the warehouse loader."""
    relationships = {name: {"data": ref.model_dump()} for name, ref in (("entity", value.entity), ("definition", value.definition)) if ref}
    return {
        "id": value.id,
        "type": "custom_field",
        "links": {"self": value.self_link} if value.self_link else {},
        "attributes": {"api_slug": value.api_slug, "value": value.value, "display_value": value.display_value},
        "relationships": relationships,
    }


async def _custom_field(client: AsyncShipsyncClient, change: Change) -> CustomField | None:
    fields = client.custom_fields
    if change.action == "delete":
        assert change.resource_id is not None
        await fields.delete(change.resource_id)
        return None
    if change.action == "update" and change.resource_id:
        try:
            return await fields.update(change.resource_id, change.after)
        except NotFoundError:
            change.action, change.before, change.resource_id = "create", None, None  # deleted meanwhile
    try:
        created = await fields.create(entity_type=change.entity_type, entity_id=change.entity_id, api_slug=change.field, value=change.after)
        change.resource_id = created.id
        return created
    except ValidationError as exc:
        if not any(e.pointer == "/data/attributes/api_slug" for e in exc.errors):
            raise
    # The service refuses a second value for (entity, slug): it exists, perhaps from a create whose
    # answer was lost. Find it and patch it.
    existing = [
        cf
        for cf in await fields.list(entity_id=change.entity_id, definition_id=change.payload.get("definition_id"))
        if cf.api_slug == change.field
    ]
    if not existing:
        raise ValidationError("the service refused the value as a duplicate but none was found", errors=())
    change.action, change.before, change.resource_id = "update", existing[0].value, existing[0].id
    change.detail = "existed already; updated"
    if existing[0].value == change.after:
        return existing[0]
    return await fields.update(existing[0].id, change.after)


async def _tracking_request(client: AsyncShipsyncClient, change: Change) -> None:
    attributes = {k: v for k, v in change.after.items() if k != "customer_id"}
    await client.tracking_requests.update(change.entity_id, attributes, customer_id=change.after.get("customer_id"))


async def _definition(client: AsyncShipsyncClient, change: Change) -> None:
    definitions = client.custom_field_definitions
    if change.field == "definition":
        attrs = change.after
        created = await definitions.create(
            entity_type=attrs["entity_type"],
            api_slug=attrs["api_slug"],
            display_name=attrs["display_name"],
            data_type=attrs["data_type"],
            description=attrs.get("description"),
            validation=attrs.get("validation"),
            default_format=attrs.get("default_format"),
            default_value=attrs.get("default_value"),
            reference_type=attrs.get("reference_type"),
        )
        change.resource_id = created.id
    assert change.resource_id is not None
    for position, value in enumerate(change.payload.get("options", [])):
        await definitions.create_option(
            change.resource_id,
            label=value.replace("_", " ").title() if value.islower() else value,
            value=value,
            position=position,
        )


async def _one(client: AsyncShipsyncClient, change: Change) -> None:
    try:
        if change.entity_type == "tracking_request":
            await _tracking_request(client, change)
        elif change.entity_type == "custom_field_definition":
            await _definition(client, change)
        elif (value := await _custom_field(client, change)) is not None:
            change.payload["resource"] = resource_of(value)
        change.status = "applied"
    except AuthenticationError:
        raise
    except OutcomeUnknownError as exc:
        change.status, change.detail = "unknown", redact(f"sent, outcome unknown ({exc}); the next run reconciles it")
    except ApiError as exc:
        change.status, change.detail = "failed", _refused(exc)


async def _run(settings: Settings, changes: Sequence[Change]) -> ClientStats:
    async with AsyncShipsyncClient.from_settings(settings) as client:
        # Definitions before anything that might use them; each change on its own otherwise.
        definitions = [c for c in changes if c.entity_type == "custom_field_definition"]
        others = [c for c in changes if c.entity_type != "custom_field_definition"]
        await asyncio.gather(*(_one(client, c) for c in definitions))
        await asyncio.gather(*(_one(client, c) for c in others))
        return client.stats


def execute(settings: Settings, changes: Sequence[Change]) -> ClientStats:
    """Send every create/update/delete in `changes`, setting each one's status and detail."""
    todo = [c for c in changes if c.action in WRITE_ACTIONS]
    if not todo:
        return ClientStats()
    return asyncio.run(_run(settings, todo))


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
