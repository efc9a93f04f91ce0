"""Tracking requests: PATCH one (spec) and the list extension with its filters."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import quote

from shipsync.api.jsonapi import Page, resource_document
from shipsync.api.models import TrackingRequest
from shipsync.api.transport import Transport

# What the reference lets a caller change; the rest are the service's own.
EDITABLE_ATTRIBUTES = frozenset({"ref_numbers", "tags", "request_number", "scac"})


class TrackingRequests:
    def __init__(self, transport: Transport) -> None:
        self._t = transport

    async def update(
        self,
        tracking_request_id: str,
        attributes: dict[str, Any],
        *,
        customer_id: str | None = None,
    ) -> TrackingRequest:
        relationships = {"customer": {"data": {"type": "party", "id": customer_id}}} if customer_id else None
        body = resource_document("tracking_request", attributes, relationships)
        body["data"]["id"] = tracking_request_id
        path = f"tracking_requests/{quote(tracking_request_id, safe='')}"
        return TrackingRequest.from_resource(await self._t.write_one("PATCH", path, body))

    def list_pages(
        self,
        *,
        request_number: str | None = None,
        status: str | None = None,
        scac: str | None = None,
        updated_since: str | None = None,
        updated_until: str | None = None,
        page_size: int = 100,
        max_pages: int | None = None,
    ) -> AsyncIterator[Page]:
        """Extension: tracking requests, filtered; `updated_since` drives incremental pulls."""
        params: dict[str, str] = {}
        for name, value in (
            ("filter[request_number]", request_number),
            ("filter[status]", status),
            ("filter[scac]", scac),
            ("filter[updated_at][start]", updated_since),
            ("filter[updated_at][end]", updated_until),
        ):
            if value:
                params[name] = value
        return self._t.paginate("tracking_requests", params, page_size=page_size, max_pages=max_pages)

    async def list(self, **filters: Any) -> list[TrackingRequest]:
        return [TrackingRequest.from_resource(r) async for page in self.list_pages(**filters) for r in page.data]
