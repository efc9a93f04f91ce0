"""The webhook event kinds the service offers: the spec's 34 subscribable kinds (its Events table)
and the 9 the service added since (api-facts.md, Webhook deliveries), 43 in all. An account's plan
may offer fewer (`GET /webhooks/events`)."""

from __future__ import annotations

from collections.abc import Iterable

_TRANSPORT = "container.transport."
SPEC_KINDS: tuple[str, ...] = (
    *(f"{_TRANSPORT}vessel_{k}" for k in ("arrived", "discharged", "loaded", "departed", "berthed")),
    *(f"{_TRANSPORT}rail_{k}" for k in ("departed", "arrived", "loaded", "unloaded")),
    *(f"{_TRANSPORT}transshipment_{k}" for k in ("arrived", "discharged", "loaded", "departed")),
    *(f"{_TRANSPORT}feeder_{k}" for k in ("arrived", "discharged", "loaded", "departed")),
    *(f"{_TRANSPORT}{k}" for k in ("empty_out", "full_in", "full_out", "empty_in", "available")),
    f"{_TRANSPORT}arrived_at_inland_destination",
    f"{_TRANSPORT}estimated.arrived_at_inland_destination",
    "shipment.estimated.arrival",
    *(f"tracking_request.{k}" for k in ("succeeded", "failed", "awaiting_manifest", "tracking_stopped")),
    "container.created",
    "container.updated",
    "container.pod_terminal_changed",
    "container.pickup_lfd.changed",
    "container.pickup_lfd_line.changed",
)
ADDED_KINDS: tuple[str, ...] = (
    f"{_TRANSPORT}estimated.vessel_arrived",
    f"{_TRANSPORT}estimated.vessel_departed",
    "container.pickup_lfd_terminal.changed",
    "container.pickup_lfd_rail.changed",
    "container.pickup_appointment.changed",
    f"{_TRANSPORT}not_available",
    f"{_TRANSPORT}delivered",
    "document.extracted",
    "document.extraction_failed",
)
EVENT_KINDS: tuple[str, ...] = (*SPEC_KINDS, *ADDED_KINDS)


def not_offered(kinds: Iterable[str], offered: Iterable[str]) -> list[str]:
    """The kinds asked for that the account's plan does not offer, in the order asked, once each."""
    allowed = set(offered)
    return list(dict.fromkeys(k for k in kinds if k not in allowed))
