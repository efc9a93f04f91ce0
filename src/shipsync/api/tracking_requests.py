"""Tracking requests: create one (`POST /tracking_requests`), ask what a number is
(`infer_number`), PATCH one (spec: only `ref_number` may change) and the list extension.

A tracking request's `tags` and `ref_numbers` belong to the shipment it tracks: they change through
`Shipments.update`. Answers carry the shipment's tags as `tags` or `shipment_tags`, and no
`ref_number`: a reference number set by PATCH shows in `ref_numbers`.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from shipsync.api.account_models import TrackingRequest
from shipsync.api.jsonapi import Pages, resource_document
from shipsync.api.transport import Transport


class TrackingRequests:
    def __init__(self, transport: Transport) -> None:
        self._t = transport

    async def create(self, attributes: dict[str, Any], *, customer_id: str | None = None) -> TrackingRequest:
        """Start tracking: `attributes` as api-facts lists them (`request_type`, `request_number`,
        `scac` or `auto_detect_vocc_scac`, `ref_numbers`, `shipment_tags`, `initial_custom_fields`),
        and the customer (a party's id) it is for. The answer is `pending`; it settles later."""
        customer = {"customer": {"data": {"type": "party", "id": customer_id}}} if customer_id else None
        body = resource_document("tracking_request", attributes, customer)
        return TrackingRequest.from_resource(await self._t.write_one("POST", "tracking_requests", body))

    async def infer_number(self, number: str) -> dict[str, Any]:
        """The service's guess of what `number` is (`infer_number_results` attributes: `number_type`,
        `validation`, `shipping_line` with its `decision` and `candidates`); a 422 if it is none."""
        page = await self._t.write("POST", "tracking_requests/infer_number", {"number": number})
        found = page.data[0] if page is not None and page.data else {}
        attributes = found.get("attributes")
        return attributes if isinstance(attributes, dict) else {}

    async def update(self, tracking_request_id: str, *, ref_number: str) -> TrackingRequest:
        """Set the request's reference number (the one attribute the reference lets a caller change)."""
        body = resource_document("tracking_request", {"ref_number": ref_number})
        body["data"]["id"] = tracking_request_id
        path = f"tracking_requests/{quote(tracking_request_id, safe='')}"
        return TrackingRequest.from_resource(await self._t.write_one("PATCH", path, body))

    async def get(self, tracking_request_id: str) -> TrackingRequest:
        page = await self._t.get_page(f"tracking_requests/{quote(tracking_request_id, safe='')}")
        return TrackingRequest.from_resource(page.data[0])

    def list_pages(
        self,
        *,
        request_number: str | None = None,
        status: str | None = None,
        scac: str | None = None,
        updated_since: str | None = None,
        updated_until: str | None = None,
        created_since: str | None = None,
        created_until: str | None = None,
        q: str | None = None,
        include: str | None = None,
        page_size: int = 100,
        max_pages: int | None = None,
        start: str | None = None,
    ) -> Pages:
        """Extension: tracking requests, filtered; `updated_since` drives incremental pulls, `q` searches numbers."""
        params: dict[str, str] = {}
        for name, value in (
            ("filter[request_number]", request_number),
            ("filter[status]", status),
            ("filter[scac]", scac),
            ("filter[updated_at][start]", updated_since),
            ("filter[updated_at][end]", updated_until),
            ("filter[created_at][start]", created_since),
            ("filter[created_at][end]", created_until),
            ("q", q),
            ("include", include),
        ):
            if value:
                params[name] = value
        return self._t.paginate("tracking_requests", params, page_size=page_size, max_pages=max_pages, start=start)

    async def list(self, **filters: Any) -> list[TrackingRequest]:
        return [TrackingRequest.from_resource(r) async for page in self.list_pages(**filters) for r in page.data]
