"""Writing definitions and their options: create (with the options of a new enum definition),
edit (PATCH), delete; options created, relabelled or moved, removed. What each write leaves at the
service goes into `change.payload` for the warehouse (`reflect.py`)."""

from __future__ import annotations

from typing import Any

from shipsync.api import AsyncShipsyncClient
from shipsync.api.jsonapi import JsonObject
from shipsync.bulk.model import Change


def answered(raw: JsonObject, sent: dict[str, Any]) -> JsonObject:
    """The resource the service answered, with what was sent wherever its answer is silent (a
    member absent or null): the write happened, so that is what the service now holds."""
    attributes = raw.get("attributes")
    attributes = dict(attributes) if isinstance(attributes, dict) else {}
    for name, value in sent.items():
        if attributes.get(name) is None:
            attributes[name] = value
    return {**raw, "attributes": attributes}


async def write_definition(client: AsyncShipsyncClient, change: Change) -> None:
    definitions = client.custom_field_definitions
    if change.action == "delete":
        assert change.resource_id is not None
        await definitions.delete(change.resource_id)
        return
    if change.action == "update":
        assert change.resource_id is not None
        updated = await definitions.update(change.resource_id, change.after)
        change.payload["resource"] = answered(updated.raw, change.after)
        return
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
    change.payload["resource"] = answered(created.raw, attrs)
    options = []
    for option in change.payload.get("options", []):
        made = await definitions.create_option(created.id, label=option["label"], value=option["value"], position=option["position"])
        options.append(answered(made.raw, option))
    change.payload["options_created"] = options


async def write_option(client: AsyncShipsyncClient, change: Change) -> None:
    definitions = client.custom_field_definitions
    definition_id = change.entity_id
    if change.action == "delete":
        assert change.resource_id is not None
        await definitions.delete_option(definition_id, change.resource_id)
        return
    if change.action == "update":
        assert change.resource_id is not None
        updated = await definitions.update_option(
            definition_id, change.resource_id, label=change.after["label"], position=change.after["position"]
        )
        change.payload["resource"] = answered(updated.raw, {"value": change.field, **change.after})
        return
    made = await definitions.create_option(
        definition_id, label=change.after["label"], value=change.after["value"], position=change.after.get("position")
    )
    change.resource_id = made.id
    change.payload["resource"] = answered(made.raw, change.after)
