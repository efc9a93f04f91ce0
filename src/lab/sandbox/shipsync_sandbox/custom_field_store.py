"""The custom field values a large sandbox account is seeded with (`--custom-field-values N`)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from shipsync.values import FieldRules, check_value
from shipsync_sandbox.reference import serial_id, stable_id
from shipsync_sandbox.world import EPOCH, Account, Resource, World


def _sample(data_type: str, options: list[str], k: int) -> Any:
    """A valid value of a data type, varied by `k`."""
    if data_type == "short_text":
        return f"PO-{k:06d}"
    if data_type == "number":
        return float(1000 + k % 90_000)
    if data_type == "date":
        return (EPOCH + timedelta(days=k % 200)).date().isoformat()
    if data_type == "datetime":
        return (EPOCH + timedelta(hours=k % 4800)).strftime("%Y-%m-%dT%H:%M:%SZ")
    if data_type == "boolean":
        return k % 2 == 0
    if data_type == "enum":
        return options[k % len(options)] if options else None
    return [options[k % len(options)]] if options else []  # enum_multi


def _rules_of(world: World, account: Account, definition: Resource) -> tuple[FieldRules, list[str]]:
    options = [o["attributes"]["value"] for o in world.options_of(account, definition["id"])]
    return FieldRules.of(definition["attributes"], options), options


def changed_value(world: World, account: Account, value: Resource, k: int) -> None:
    """Give a value another valid value of its field (as someone editing it in the app would)."""
    definition = world.definition(account, value["relationships"]["definition"]["data"]["id"])
    if definition is None:
        return
    rules, options = _rules_of(world, account, definition)
    new = _sample(definition["attributes"]["data_type"], options, k)
    if new == value["attributes"]["value"]:
        new = _sample(definition["attributes"]["data_type"], options, k + 1)
    value["attributes"] = {**value["attributes"], "value": new, "display_value": check_value(new, rules)}


def seed_values(world: World, account: Account, count: int, *, seed: int, index: int) -> None:
    """`count` values of the service's template fields: every container's fields, then shipments'."""
    slots: list[tuple[str, Resource, FieldRules, list[str]]] = []
    for definition in world.template_definitions.values():
        attributes = definition["attributes"]
        if attributes["data_type"] == "reference":
            continue
        rules, options = _rules_of(world, account, definition)
        slots.append((attributes["entity_type"].lower(), definition, rules, options))
    entities = [(kind, account.of_type(kind), [s for s in slots if s[0] == kind]) for kind in ("container", "shipment")]
    store = account.custom_fields
    base = stable_id("custom_field", seed, index)
    k = 0
    for kind, records, fields in entities:
        for record in records:
            for _, definition, rules, options in fields:
                if k == count:
                    return
                value = _sample(definition["attributes"]["data_type"], options, k)
                value_id = serial_id(base, k)
                store[value_id] = {
                    "id": value_id,
                    "type": "custom_field",
                    "attributes": {
                        "api_slug": definition["attributes"]["api_slug"],
                        "value": value,
                        "display_value": check_value(value, rules),
                    },
                    "relationships": {
                        "entity": {"data": {"type": kind, "id": record["id"]}},
                        "definition": {"data": {"type": "custom_field_definition", "id": definition["id"]}},
                    },
                    "links": {"self": f"/v2/custom_fields/{value_id}"},
                }
                k += 1
    if k < count:
        raise ValueError(f"{count} custom field values do not fit on this account's containers and shipments (at most {k})")
