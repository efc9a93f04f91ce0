"""The webhook event kinds one can subscribe to: the spec's 34 and the nine the service added since.

`GET /webhooks/events` names the kinds open to an account (it may be fewer, by plan); when it does
not answer, registrations are checked against these 43. The receiver stores every kind it gets,
known here or not.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Iterable

SPEC_EVENT_KINDS: tuple[str, ...] = (
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
# The spec is a dated snapshot: the service offers these too today (see docs/api-facts.md).
NEWER_EVENT_KINDS: tuple[str, ...] = (
    "container.transport.estimated.vessel_arrived",
    "container.transport.estimated.vessel_departed",
    "container.pickup_lfd_terminal.changed",
    "container.pickup_lfd_rail.changed",
    "container.pickup_appointment.changed",
    "container.transport.not_available",
    "container.transport.delivered",
    "document.extracted",
    "document.extraction_failed",
)
EVENT_KINDS: tuple[str, ...] = SPEC_EVENT_KINDS + NEWER_EVENT_KINDS
EVENT_KIND_SET = frozenset(EVENT_KINDS)


def unknown_event_kinds(events: Iterable[str], allowed: Collection[str] = EVENT_KIND_SET) -> list[str]:
    """Each kind not in `allowed`, with the closest allowed one: `vessel_arived (did you mean ...?)`.

    A kind the service knows but this account may not subscribe to says so instead.
    """
    choices = sorted(allowed)
    problems = []
    for kind in events:
        if kind in allowed:
            continue
        if kind in EVENT_KIND_SET:
            problems.append(f"{kind} (not available to this account)")
            continue
        close = difflib.get_close_matches(kind, choices, n=1, cutoff=0.0)
        problems.append(f"{kind} (did you mean {close[0]}?)" if close else kind)
    return problems
