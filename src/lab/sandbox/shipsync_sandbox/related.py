"""What an `include` adds to an answer: the related resources a page's relationships name, as
served (shipments and containers as of their journeys), from the account, the catalog of places,
or a container's past transport events; only of the types the operation's answer carries.

The service's reference lists, per operation, the types its `included` holds (`CARRIED`). A
relationship may name a record of another type (a shipment's destination may be a metro area):
the answer names it and does not carry it, as the reference's schemas say. The reference
contradicts itself here: one container carries its terminals and transport events, the listing
of containers only their shipments; one notification carries a `container_updated_event`, the
listing of notifications does not. The sandbox answers each as its own schema says.
"""

from __future__ import annotations

from typing import Any

from shipsync_sandbox.journey_state import past_events
from shipsync_sandbox.places import catalog
from shipsync_sandbox.resources import Resource
from shipsync_sandbox.views import view
from shipsync_sandbox.world import Account


def container_events(account: Account, container_id: str) -> list[Resource]:
    """A container's past milestones as of the instant it is served at (none for an unplanned one)."""
    plan = account.plans.get(account.shipment_of.get(container_id, ""))
    if plan is None or container_id not in plan.containers:
        return []
    return past_events(plan, plan.containers[container_id], account.as_of(container_id))


def resolve(account: Account, type_: str, id_: str) -> Resource | None:
    found = account.resource(type_, id_)
    return view(account, found) if found is not None else catalog().get(type_, id_)


# The types each operation's `included` may hold, as the reference's response schemas list them.
DOCUMENT_RECORDS = ("account", "user", "shipment", "container", "document", "email_submission", "document_representation")
CARRIED: dict[str, tuple[str, ...]] = {
    "documents": DOCUMENT_RECORDS,
    "document": DOCUMENT_RECORDS,
    "tracking_requests": ("account", "shipping_line", "shipment"),
    "tracking_request": ("account", "shipment", "shipping_line"),
    "shipments": ("container", "port", "terminal"),
    "shipment": ("container", "port", "terminal"),
    "containers": ("shipment",),
    "container": ("shipment", "terminal", "transport_event"),
    "transport_events": ("shipment", "container", "port", "metro_area", "terminal", "rail_terminal", "vessel"),
    "webhook_notifications": ("webhook", "tracking_request", "transport_event", "estimated_event"),
    # The reference's examples of one notification also carry its shipment, container, port and
    # terminal (the contradictions list).
    "webhook_notification": (
        "webhook",
        "tracking_request",
        "transport_event",
        "estimated_event",
        "container_updated_event",
        "shipment",
        "container",
        "port",
        "terminal",
    ),
}


def related_of(account: Account, resources: list[dict[str, Any]], includes: list[str], answer: str) -> list[dict[str, Any]]:
    """The records `includes` name from `resources`, of the types the `answer` (a key of CARRIED) carries."""
    carried = CARRIED[answer]
    seen: dict[tuple[str, str], dict[str, Any]] = {}
    events: dict[tuple[str, str], Resource] = {}
    if "transport_events" in includes:
        for resource in resources:
            if resource.get("type") == "container":
                events.update((("transport_event", e["id"]), e) for e in container_events(account, resource["id"]))
    for resource in resources:
        for name in includes:
            data = (resource.get("relationships", {}).get(name) or {}).get("data")
            for ref in data if isinstance(data, list) else [data] if data else []:
                key = (ref["type"], ref["id"])
                if key[0] not in carried or key in seen:
                    continue
                if (found := events.get(key) or resolve(account, *key)) is not None:
                    seen[key] = found
    return list(seen.values())
