"""Custom field definitions and their options (extensions beyond the spec's create, per the reference).

Create is the spec's; listing, reading, editing (PATCH) and deleting definitions, and every
operation on options, are the documented extensions the bulk kinds need.
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from shipsync.api.account_models import CustomFieldDefinition, CustomFieldOption
from shipsync.api.jsonapi import Pages, resource_document
from shipsync.api.transport import Transport

# What PATCH /custom_field_definitions/{id} may change (not api_slug, entity_type, data_type).
EDITABLE_DEFINITION_ATTRIBUTES = ("display_name", "description", "validation", "default_format", "default_value")


def _definition_path(definition_id: str, *rest: str) -> str:
    return "/".join(["custom_field_definitions", quote(definition_id, safe=""), *(quote(r, safe="") for r in rest)])


class CustomFieldDefinitions:
    def __init__(self, transport: Transport) -> None:
        self._t = transport

    async def create(
        self,
        *,
        entity_type: str,
        api_slug: str,
        display_name: str,
        data_type: str,
        description: str | None = None,
        validation: dict[str, Any] | None = None,
        default_format: str | None = None,
        default_value: Any = None,
        reference_type: str | None = None,
    ) -> CustomFieldDefinition:
        """`entity_type`: `Shipment` or `Container` (what the service takes on create today)."""
        attributes: dict[str, Any] = {
            "entity_type": entity_type,
            "api_slug": api_slug,
            "display_name": display_name,
            "data_type": data_type,
        }
        for name, value in (
            ("description", description),
            ("validation", validation),
            ("default_format", default_format),
            ("default_value", default_value),
            ("reference_type", reference_type),
        ):
            if value is not None:
                attributes[name] = value
        body = resource_document("custom_field_definition", attributes)
        return CustomFieldDefinition.from_resource(await self._t.write_one("POST", "custom_field_definitions", body))

    async def update(self, definition_id: str, attributes: Mapping[str, Any]) -> CustomFieldDefinition:
        """Extension: change display_name, description, validation, default_format or default_value."""
        unknown = set(attributes) - set(EDITABLE_DEFINITION_ATTRIBUTES)
        if unknown:
            raise ValueError(f"definitions cannot change {', '.join(sorted(unknown))}")
        body = resource_document("custom_field_definition", dict(attributes))
        body["data"]["id"] = definition_id
        return CustomFieldDefinition.from_resource(await self._t.write_one("PATCH", _definition_path(definition_id), body))

    async def delete(self, definition_id: str) -> None:
        """Extension: remove a definition (undo of a create)."""
        await self._t.request("DELETE", _definition_path(definition_id))

    async def get(self, definition_id: str) -> CustomFieldDefinition:
        return CustomFieldDefinition.from_resource((await self._t.get_page(_definition_path(definition_id))).data[0])

    def list_pages(
        self,
        *,
        entity_type: str | None = None,
        data_type: str | None = None,
        display_name: str | None = None,
        page_size: int = 100,
    ) -> Pages:
        """Extension: the account's own and the service's template definitions (`display_name`: a prefix)."""
        params = {
            f"filter[{k}]": v for k, v in (("entity_type", entity_type), ("data_type", data_type), ("display_name", display_name)) if v
        }
        return self._t.paginate("custom_field_definitions", params, page_size=page_size)

    async def list(self, **filters: Any) -> list[CustomFieldDefinition]:
        return [CustomFieldDefinition.from_resource(r) async for p in self.list_pages(**filters) for r in p.data]

    def option_pages(self, definition_id: str) -> Pages:
        """A definition's options (the operation declares no paging: none asked)."""
        return self._t.paginate(_definition_path(definition_id, "options"), page_size=None)

    async def options(self, definition_id: str) -> builtins.list[CustomFieldOption]:
        return [CustomFieldOption.from_resource(r) async for p in self.option_pages(definition_id) for r in p.data]

    async def create_option(self, definition_id: str, *, label: str, value: str, position: int | None = None) -> CustomFieldOption:
        attributes: dict[str, Any] = {"label": label, "value": value}
        if position is not None:
            attributes["position"] = position
        body = resource_document("custom_field_option", attributes)
        return CustomFieldOption.from_resource(await self._t.write_one("POST", _definition_path(definition_id, "options"), body))

    async def update_option(
        self, definition_id: str, option_id: str, *, label: str | None = None, position: int | None = None
    ) -> CustomFieldOption:
        """Extension: relabel or move an option (its value is its identity and does not change)."""
        attributes = {k: v for k, v in (("label", label), ("position", position)) if v is not None}
        body = resource_document("custom_field_option", attributes)
        body["data"]["id"] = option_id
        path = _definition_path(definition_id, "options", option_id)
        return CustomFieldOption.from_resource(await self._t.write_one("PATCH", path, body))

    async def delete_option(self, definition_id: str, option_id: str) -> None:
        await self._t.request("DELETE", _definition_path(definition_id, "options", option_id))
