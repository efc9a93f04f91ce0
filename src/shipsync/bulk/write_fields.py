"""Writing one custom field value: create, update or delete, reconciling with what the service has.

A create the service refuses as a duplicate (a value exists already for that entity and slug,
perhaps from a create whose answer was lost) is found through the entity's own custom-field route
and updated instead. The value written goes to the warehouse as sent, with what the answer adds.
"""

from __future__ import annotations

from typing import Any

from shipsync.api import AsyncShipsyncClient
from shipsync.api.account_models import CustomField
from shipsync.api.jsonapi import JsonObject
from shipsync.bulk.model import Change
from shipsync.errors import NotFoundError, ValidationError


def resource_of(value: CustomField, change: Change) -> JsonObject:
    """The value as the warehouse keeps it: the answer's members, and where the answer left one
    out (or null), what was sent. A write that happened is never recorded as something else."""
    entity = value.entity.model_dump() if value.entity else {"type": change.entity_type, "id": change.entity_id}
    definition_id = value.definition.id if value.definition else change.payload.get("definition_id")
    relationships: dict[str, Any] = {"entity": {"data": entity}}
    if definition_id:
        relationships["definition"] = {"data": {"type": "custom_field_definition", "id": definition_id}}
    return {
        "id": value.id,
        "type": "custom_field",
        "links": {"self": value.self_link} if value.self_link else {},
        "attributes": {
            "api_slug": value.api_slug or change.field,
            "value": value.value if value.value is not None else change.after,
            "display_value": value.display_value,
        },
        "relationships": relationships,
    }


async def _recover_duplicate(client: AsyncShipsyncClient, change: Change) -> CustomField:
    existing = [cf for cf in await client.custom_fields.of_entity(change.entity_type, change.entity_id) if cf.api_slug == change.field]
    if not existing:
        raise ValidationError("the service refused the value as a duplicate but none was found", errors=())
    change.action, change.before, change.resource_id = "update", existing[0].value, existing[0].id
    change.detail = "existed already; updated"
    if existing[0].value == change.after:
        return existing[0]
    return await client.custom_fields.update(existing[0].id, change.after)


async def write_custom_field(client: AsyncShipsyncClient, change: Change) -> None:
    fields = client.custom_fields
    if change.action == "delete":
        assert change.resource_id is not None
        await fields.delete(change.resource_id)
        return
    value: CustomField | None = None
    if change.action == "update" and change.resource_id:
        try:
            value = await fields.update(change.resource_id, change.after)
        except NotFoundError:
            change.action, change.before, change.resource_id = "create", None, None  # deleted meanwhile
    if value is None:
        try:
            value = await fields.create(
                entity_type=change.entity_type, entity_id=change.entity_id, api_slug=change.field, value=change.after
            )
            change.resource_id = value.id
        except ValidationError as exc:
            if not any(e.pointer == "/data/attributes/api_slug" for e in exc.errors):
                raise
            value = await _recover_duplicate(client, change)
    change.payload["resource"] = resource_of(value, change)
