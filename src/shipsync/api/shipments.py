"""Shipments (extensions, see docs/tracking-model.md): read one or a listing, and change the
shipment's `tags` and `ref_numbers`, which is where a tracking request's tags live. Answers are
the declared `Shipment` (`api.tracking_models`): every member the warehouse types, the rest in `raw`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

from shipsync.api.jsonapi import Page, Pages, resource_document
from shipsync.api.tracking_models import Shipment
from shipsync.api.transport import Transport


class Shipments:
    def __init__(self, transport: Transport) -> None:
        self._t = transport

    async def get_page(self, shipment_id: str, include: str | None = None) -> Page:
        params = {"include": include} if include else None
        return await self._t.get_page(f"shipments/{quote(shipment_id, safe='')}", params)

    async def get(self, shipment_id: str) -> Shipment:
        return Shipment.from_resource((await self.get_page(shipment_id)).data[0])

    def list_pages(
        self,
        *,
        q: str | None = None,
        number: str | None = None,
        tracking_stopped: bool | None = None,
        include: str | None = None,
        page_size: int = 100,
        max_pages: int | None = None,
        start: str | None = None,
    ) -> Pages:
        params: dict[str, str] = {}
        for name, value in (("q", q), ("number", number), ("include", include)):
            if value:
                params[name] = value
        if tracking_stopped is not None:
            params["filter[tracking_stopped]"] = "true" if tracking_stopped else "false"
        return self._t.paginate("shipments", params, page_size=page_size, max_pages=max_pages, start=start)

    async def update(self, shipment_id: str, *, tags: Sequence[str] | None = None, ref_numbers: Sequence[str] | None = None) -> Shipment:
        """Replace the shipment's tags and/or reference numbers (whole lists, as the service takes them)."""
        attributes: dict[str, Any] = {}
        if tags is not None:
            attributes["tags"] = list(dict.fromkeys(tags))  # the service keeps tags unique
        if ref_numbers is not None:
            attributes["ref_numbers"] = list(ref_numbers)
        if not attributes:
            raise ValueError("nothing to change: give tags and/or ref_numbers")
        body = resource_document("shipment", attributes)
        body["data"]["id"] = shipment_id
        return Shipment.from_resource(await self._t.write_one("PATCH", f"shipments/{quote(shipment_id, safe='')}", body))

    async def stop_tracking(self, shipment_id: str) -> Shipment:
        """`PATCH /shipments/{id}/stop_tracking` (no body): the service stops following it."""
        return await self._tracking(shipment_id, "stop_tracking")

    async def resume_tracking(self, shipment_id: str) -> Shipment:
        """`PATCH /shipments/{id}/resume_tracking` (no body): the service follows it again."""
        return await self._tracking(shipment_id, "resume_tracking")

    async def _tracking(self, shipment_id: str, action: str) -> Shipment:
        path = f"shipments/{quote(shipment_id, safe='')}/{action}"
        page = await self._t.write("PATCH", path, None)
        if page is None or not page.data:
            return Shipment.from_resource({"id": shipment_id, "type": "shipment", "attributes": {}})
        return Shipment.from_resource(page.data[0])
