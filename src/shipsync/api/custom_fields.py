"""Custom field values on shipments, containers and tracking requests.

`POST /custom_fields` is the spec's, for shipments and containers only (api-facts): a value on a
tracking request is created with `POST /tracking_requests/{id}/custom_fields`. Listing, PATCH and
DELETE by id, and the per-entity routes `/{shipments,containers,tracking_requests}/{id}/custom_fields[/{api_slug}]`
are the documented extensions (the per-entity ones set or clear a value by slug, without knowing its id).
"""

from __future__ import annotations

import builtins
from typing import Any
from urllib.parse import quote

from shipsync.api.account_models import CustomField
from shipsync.api.entity_types import ROUTE_OF_ENTITY
from shipsync.api.jsonapi import Pages, resource_document
from shipsync.api.transport import Transport

# The entities `POST /custom_fields` takes; others' values are created on their own route.
GENERIC_ROUTE_ENTITIES = ("shipment", "container")


def entity_path(entity_type: str, entity_id: str, api_slug: str | None = None) -> str:
    """`shipments/ID/custom_fields[/SLUG]` for a value's entity (`shipment`, `container`, `tracking_request`)."""
    route = ROUTE_OF_ENTITY.get(entity_type)
    if route is None:
        raise ValueError(f"custom fields hang on {', '.join(ROUTE_OF_ENTITY)}, not {entity_type!r}")
    path = f"{route}/{quote(entity_id, safe='')}/custom_fields"
    return f"{path}/{quote(api_slug, safe='')}" if api_slug else path


class CustomFields:
    def __init__(self, transport: Transport) -> None:
        self._t = transport

    async def create(self, *, entity_type: str, entity_id: str, api_slug: str, value: Any) -> CustomField:
        """`entity_type` is the relationship type: `shipment`, `container` or `tracking_request` (whose
        values go through its own route, the one the service takes them on)."""
        if entity_type not in GENERIC_ROUTE_ENTITIES:
            return await self.set_on_entity(entity_type, entity_id, api_slug, value)
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
    ) -> Pages:
        """Extension: current values, to diff a spreadsheet against."""
        params = {
            f"filter[{k}]": v for k, v in (("entity_type", entity_type), ("entity_id", entity_id), ("definition_id", definition_id)) if v
        }
        return self._t.paginate("custom_fields", params, page_size=page_size)

    async def list(self, **filters: Any) -> builtins.list[CustomField]:
        return [CustomField.from_resource(r) async for p in self.list_pages(**filters) for r in p.data]

    def entity_pages(self, entity_type: str, entity_id: str) -> Pages:
        """Extension: one entity's values (`GET /{entities}/{id}/custom_fields`: no paging declared,
        so none asked; pages followed should the service send a `links.next`)."""
        return self._t.paginate(entity_path(entity_type, entity_id), page_size=None)

    async def of_entity(self, entity_type: str, entity_id: str) -> builtins.list[CustomField]:
        """Extension: one entity's values."""
        return [CustomField.from_resource(r) async for p in self.entity_pages(entity_type, entity_id) for r in p.data]

    async def set_on_entity(self, entity_type: str, entity_id: str, api_slug: str, value: Any) -> CustomField:
        """Extension: create one value on an entity through its own route."""
        body = resource_document("custom_field", {"api_slug": api_slug, "value": value})
        return CustomField.from_resource(await self._t.write_one("POST", entity_path(entity_type, entity_id), body))

    async def update_on_entity(self, entity_type: str, entity_id: str, api_slug: str, value: Any) -> CustomField:
        """Extension: change one value by slug, without knowing its id."""
        body = resource_document("custom_field", {"value": value})
        return CustomField.from_resource(await self._t.write_one("PATCH", entity_path(entity_type, entity_id, api_slug), body))

    async def delete_on_entity(self, entity_type: str, entity_id: str, api_slug: str) -> None:
        await self._t.request("DELETE", entity_path(entity_type, entity_id, api_slug))
