"""Webhooks: register (POST) and delete; the 34 subscribable event kinds of the spec."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote

from shipsync.api.jsonapi import resource_document
from shipsync.api.models import Webhook
from shipsync.api.transport import Transport

EVENT_KINDS: tuple[str, ...] = (
    "container.transport.vessel_arrived",
    "container.transport.vessel_discharged",
    "container.transport.vessel_loaded",
    "container.transport.vessel_departed",
    "container.transport.vessel_berthed",
    "container.transport.rail_departed",
    "container.transport.rail_arrived",
    "container.transport.rail_loaded",
    "container.transport.rail_unloaded",
    "container.transport.transshipment_arrived",
    "container.transport.transshipment_discharged",
    "container.transport.transshipment_loaded",
    "container.transport.transshipment_departed",
    "container.transport.feeder_arrived",
    "container.transport.feeder_discharged",
    "container.transport.feeder_loaded",
    "container.transport.feeder_departed",
    "container.transport.empty_out",
    "container.transport.full_in",
    "container.transport.full_out",
    "container.transport.empty_in",
    "container.transport.available",
    "container.transport.arrived_at_inland_destination",
    "container.transport.estimated.arrived_at_inland_destination",
    "shipment.estimated.arrival",
    "tracking_request.succeeded",
    "tracking_request.failed",
    "tracking_request.awaiting_manifest",
    "tracking_request.tracking_stopped",
    "container.created",
    "container.updated",
    "container.pod_terminal_changed",
    "container.pickup_lfd.changed",
    "container.pickup_lfd_line.changed",
)
EVENT_KIND_SET = frozenset(EVENT_KINDS)


def unknown_event_kinds(events: Iterable[str]) -> list[str]:
    """Each unknown kind with the closest valid one, e.g. `vessel_arived (did you mean ...?)`."""
    problems = []
    for kind in events:
        if kind not in EVENT_KIND_SET:
            close = difflib.get_close_matches(kind, EVENT_KINDS, n=1, cutoff=0.0)
            problems.append(f"{kind} (did you mean {close[0]}?)" if close else kind)
    return problems


class Webhooks:
    def __init__(self, transport: Transport) -> None:
        self._t = transport

    async def create(
        self,
        url: str,
        events: Iterable[str],
        *,
        active: bool = True,
        headers: Iterable[tuple[str, str]] = (),
    ) -> Webhook:
        event_list = list(events)
        if bad := unknown_event_kinds(event_list):
            raise ValueError(f"unknown event kind(s): {', '.join(bad)}")
        attributes: dict[str, Any] = {"url": url, "events": event_list, "active": active}
        header_list = [{"name": n, "value": v} for n, v in headers]
        if header_list:
            attributes["headers"] = header_list
        return Webhook.from_resource(await self._t.write_one("POST", "webhooks", resource_document("webhook", attributes)))

    async def delete(self, webhook_id: str) -> None:
        await self._t.request("DELETE", f"webhooks/{quote(webhook_id, safe='')}")
