"""What an `include` adds to an answer: the related resources a page's relationships name, as
served (shipments and containers as of their journeys), from the account, the catalog of places,
or a container's past transport events."""

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


def related_of(account: Account, resources: list[dict[str, Any]], includes: list[str]) -> list[dict[str, Any]]:
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
                if key not in seen and (found := events.get(key) or resolve(account, *key)) is not None:
                    seen[key] = found
    return list(seen.values())
