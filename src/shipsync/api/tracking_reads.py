"""Reads of the tracking resources (extensions, docs/tracking-model.md): containers and their
transport events, ports, terminals, vessels, shipping lines and parties. Shipments are read through
`api/shipments.py`.

Every read returns the service's answer as a `Page` (primary data, `included`, links, meta) for the
normalizers to type: parsing keeps any member as sent (null, absent, unknown members or enum
values never fail a read), and only a resource without `id` or `type` is dropped.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from urllib.parse import quote

from shipsync.api.jsonapi import JsonObject, Page, Pages
from shipsync.api.transport import Transport

SHIPMENT_INCLUDES = ("containers", "pod_terminal", "port_of_lading", "port_of_discharge", "destination", "destination_terminal")
CONTAINER_INCLUDES = ("shipment", "pod_terminal", "pickup_facility", "transport_events")
TRANSPORT_EVENT_INCLUDES = ("location", "terminal", "vessel")


def include_value(include: str | Iterable[str] | None) -> str | None:
    """The `include` parameter from names (a comma-separated string passes as is)."""
    if include is None or isinstance(include, str):
        return include or None
    return ",".join(include) or None


def _params(include: str | Iterable[str] | None) -> dict[str, str]:
    value = include_value(include)
    return {"include": value} if value else {}


class Containers:
    """`GET /containers` (most recently refreshed first), one container, a container's transport
    events and raw events."""

    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def list_pages(
        self,
        *,
        include: str | Iterable[str] | None = None,
        page_size: int = 100,
        max_pages: int | None = None,
        start: str | None = None,
    ) -> Pages:
        return self._t.paginate("containers", _params(include), page_size=page_size, max_pages=max_pages, start=start)

    async def get_page(self, container_id: str, include: str | Iterable[str] | None = None) -> Page:
        return await self._t.get_page(f"containers/{quote(container_id, safe='')}", _params(include) or None)

    def transport_event_pages(self, container_id: str, *, include: str | Iterable[str] | None = None) -> Pages:
        """The container's past milestones (the operation declares no paging: none asked); followed
        page by page should the service ever page them."""
        path = f"containers/{quote(container_id, safe='')}/transport_events"
        return self._t.paginate(path, _params(include), page_size=None)

    async def transport_events(self, container_id: str, *, include: str | Iterable[str] | None = None) -> Page:
        """All of a container's transport events (and what `include` named) as one page."""
        return await joined(self.transport_event_pages(container_id, include=include))

    async def raw_events(self, container_id: str) -> Page:
        """The carrier's milestones of a container, past and estimated (a deprecated operation
        that declares no paging: none asked; followed page by page should the service page them)."""
        path = f"containers/{quote(container_id, safe='')}/raw_events"
        return await joined(self._t.paginate(path, {}, page_size=None))


class Places:
    """Ports (by id or UN/LOCODE), terminals, vessels: one record each. A rail terminal has no
    route of its own in the reference: it comes with the records that name it."""

    def __init__(self, transport: Transport) -> None:
        self._t = transport

    async def port_page(self, port_id_or_locode: str) -> Page:
        return await self._t.get_page(f"ports/{quote(port_id_or_locode, safe='')}")

    async def terminal_page(self, terminal_id: str) -> Page:
        return await self._t.get_page(f"terminals/{quote(terminal_id, safe='')}")

    async def vessel_page(self, vessel_id: str) -> Page:
        return await self._t.get_page(f"vessels/{quote(vessel_id, safe='')}")

    async def page_of(self, type_: str, id_: str) -> Page:
        """One place by the type a relationship names (`port`, `terminal`, `vessel`)."""
        if type_ == "port":
            return await self.port_page(id_)
        if type_ == "terminal":
            return await self.terminal_page(id_)
        if type_ == "vessel":
            return await self.vessel_page(id_)
        raise ValueError(f"not a place the service reads by id: {type_!r} (port, terminal, vessel)")


class ShippingLines:
    """`GET /shipping_lines`: every supported carrier in one answer (not paged)."""

    def __init__(self, transport: Transport) -> None:
        self._t = transport

    async def list_page(self) -> Page:
        """All carriers ("no pagination for this endpoint": none asked); should the service add
        paging, every page is read and joined."""
        return await joined(self._t.paginate("shipping_lines", {}, page_size=None))


class Parties:
    """`GET /parties`: the account's parties (the customers a tracking request may name), paged."""

    def __init__(self, transport: Transport) -> None:
        self._t = transport

    async def list_all(self) -> Page:
        """Every party, every page joined."""
        return await joined(self._t.paginate("parties", {}))


async def joined(pages: AsyncIterator[Page]) -> Page:
    """Every page of a listing as one page (links and meta of the last)."""
    data: list[JsonObject] = []
    included: list[JsonObject] = []
    last = Page([], [], {}, {})
    async for page in pages:
        data.extend(page.data)
        included.extend(page.included)
        last = page
    return Page(data, included, last.links, last.meta)
