"""An account's custom field values: a value as the service answers it, checked against its
definition and options, and the values a large account is seeded with (`--custom-field-values N`)."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import Any

from shipsync_sandbox.resources import Resource, serial_id, stable_id
from shipsync_sandbox.timeline import iso
from shipsync_sandbox.value_rules import display_value
from shipsync_sandbox.world import Account, World


def custom_field_resource(definition: Resource, entity: tuple[str, str], value: Any, display: str, value_id: str | None = None) -> Resource:
    """A value of `definition` on `entity` as the service answers it (checked by the caller)."""
    value_id = value_id or str(uuid.uuid4())
    return {
        "id": value_id,
        "type": "custom_field",
        "attributes": {"api_slug": definition["attributes"]["api_slug"], "value": value, "display_value": display},
        "relationships": {
            "entity": {"data": {"type": entity[0], "id": entity[1]}},
            "definition": {"data": {"type": "custom_field_definition", "id": definition["id"]}},
        },
        "links": {"self": f"/v2/custom_fields/{value_id}"},
    }


def shown_as(world: World, account: Account, definition: Resource, value: Any) -> str:
    """The value's `display_value`, or ValueRefused (`value_rules.py`) when its definition refuses it."""
    return display_value(value, definition["attributes"], _options_of(world, account, definition))


def _sample(data_type: str, options: list[str], k: int, epoch: datetime) -> Any:
    """A valid value of a data type, varied by `k`, its dates in the account's seeded span."""
    if data_type == "short_text":
        return f"PO-{k:06d}"
    if data_type == "number":
        return float(1000 + k % 90_000)
    if data_type == "date":
        return (epoch + timedelta(days=k % 200)).date().isoformat()
    if data_type == "datetime":
        return iso(epoch + timedelta(hours=k % 4800))
    if data_type == "boolean":
        return k % 2 == 0
    if data_type == "enum":
        return options[k % len(options)] if options else None
    return [options[k % len(options)]] if options else []  # enum_multi


def _options_of(world: World, account: Account, definition: Resource) -> list[str]:
    return [o["attributes"]["value"] for o in world.options_of(account, definition["id"])]


def changed_value(world: World, account: Account, value: Resource, k: int) -> None:
    """Give a value another valid value of its field (as someone editing it in the app would)."""
    definition = world.definition(account, value["relationships"]["definition"]["data"]["id"])
    if definition is None:
        return
    options = _options_of(world, account, definition)
    new = _sample(definition["attributes"]["data_type"], options, k, account.epoch)
    if new == value["attributes"]["value"]:
        new = _sample(definition["attributes"]["data_type"], options, k + 1, account.epoch)
    value["attributes"] = {**value["attributes"], "value": new, "display_value": display_value(new, definition["attributes"], options)}


def seed_values(world: World, account: Account, count: int, *, seed: int, index: int) -> None:
    """`count` values of the account's container and shipment fields: every container's fields, then shipments'."""
    slots: list[tuple[str, Resource, list[str]]] = []
    for definition in account.definitions.values():
        attributes = definition["attributes"]
        if attributes["data_type"] == "reference" or attributes["entity_type"] not in ("Container", "Shipment"):
            continue
        slots.append((attributes["entity_type"].lower(), definition, _options_of(world, account, definition)))
    entities = [(kind, account.of_type(kind), [s for s in slots if s[0] == kind]) for kind in ("container", "shipment")]
    store = account.custom_fields
    base = stable_id("custom_field", seed, index)
    k = 0
    for kind, records, fields in entities:
        for record in records:
            for _, definition, options in fields:
                if k == count:
                    return
                value = _sample(definition["attributes"]["data_type"], options, k, account.epoch)
                value_id = serial_id(base, k)
                display = display_value(value, definition["attributes"], options)
                store[value_id] = custom_field_resource(definition, (kind, record["id"]), value, display, value_id)
                k += 1
    if k < count:
        raise ValueError(f"{count} custom field values do not fit on this account's containers and shipments (at most {k})")
