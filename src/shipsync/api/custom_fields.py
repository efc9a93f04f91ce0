"""Custom field definitions, their options, and custom field values on shipments and containers."""

from __future__ import annotations

import builtins
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import quote

from shipsync.api.jsonapi import Page, resource_document
from shipsync.api.models import CustomField, CustomFieldDefinition, CustomFieldOption
from shipsync.api.transport import Transport

ENTITY_TYPES = ("Shipment", "Cargo")


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

    def list_pages(
        self,
        *,
        entity_type: str | None = None,
        data_type: str | None = None,
        display_name: str | None = None,
        page_size: int = 100,
    ) -> AsyncIterator[Page]:
        """Extension: the account's own and the service's template definitions."""
        params = {
            f"filter[{k}]": v for k, v in (("entity_type", entity_type), ("data_type", data_type), ("display_name", display_name)) if v
        }
        return self._t.paginate("custom_field_definitions", params, page_size=page_size)

    async def list(self, **filters: Any) -> list[CustomFieldDefinition]:
        return [CustomFieldDefinition.from_resource(r) async for p in self.list_pages(**filters) for r in p.data]

    def option_pages(self, definition_id: str) -> AsyncIterator[Page]:
        return self._t.paginate(f"custom_field_definitions/{quote(definition_id, safe='')}/options")

    async def options(self, definition_id: str) -> builtins.list[CustomFieldOption]:
        return [CustomFieldOption.from_resource(r) async for p in self.option_pages(definition_id) for r in p.data]

    async def create_option(self, definition_id: str, *, label: str, value: str, position: int | None = None) -> CustomFieldOption:
        attributes: dict[str, Any] = {"label": label, "value": value}
        if position is not None:
            attributes["position"] = position
        path = f"custom_field_definitions/{quote(definition_id, safe='')}/options"
        body = resource_document("custom_field_option", attributes)
        return CustomFieldOption.from_resource(await self._t.write_one("POST", path, body))


class CustomFields:
    def __init__(self, transport: Transport) -> None:
        self._t = transport

    async def create(self, *, entity_type: str, entity_id: str, api_slug: str, value: Any) -> CustomField:
        """`entity_type` is the relationship type: `shipment` or `container`."""
        body = resource_document(
            "custom_field",
            {"api_slug": api_slug, "value": value},
            {"entity": {"data": {"type": entity_type, "id": entity_id}}},
        )
        return CustomField.from_resource(await self._t.write_one("POST", "custom_fields", body))

    async def update(self, custom_field_id: str, value: Any) -> CustomField:
        """Extension: change an existing value."""
        path = f"custom_fields/{quote(custom_field_id, safe='')}"
        body = resource_document("custom_field", {"value": value})
        body["data"]["id"] = custom_field_id
        return CustomField.from_resource(await self._t.write_one("PATCH", path, body))

    async def delete(self, custom_field_id: str) -> None:
        """Extension: remove a value (undo of a create)."""
        await self._t.request("DELETE", f"custom_fields/{quote(custom_field_id, safe='')}")

    def list_pages(
        self,
        *,
        entity_type: str | None = None,
        entity_id: str | None = None,
        definition_id: str | None = None,
        page_size: int = 100,
    ) -> AsyncIterator[Page]:
        """Extension: current values, to diff a spreadsheet against."""
        params = {
            f"filter[{k}]": v for k, v in (("entity_type", entity_type), ("entity_id", entity_id), ("definition_id", definition_id)) if v
        }
        return self._t.paginate("custom_fields", params, page_size=page_size)

    async def list(self, **filters: Any) -> list[CustomField]:
        return [CustomField.from_resource(r) async for p in self.list_pages(**filters) for r in p.data]
