"""How the sandbox shows stored resources whose members come from elsewhere, as the service does.

A tracking request shows its shipment's reference numbers and tags (as `shipment_tags`, like
deliveries and newer answers), or, until it has one, those it carries for it; a webhook shows
`headers: null` when none were set; a shipment or container shows its journey as of the account's
clock (`journey_state.py`), and a shipment a user stopped tracking says so and names the user (the
API key's).
"""

from __future__ import annotations

from datetime import datetime

from shipsync_sandbox.journey_state import container_state, shipment_state
from shipsync_sandbox.resources import Resource
from shipsync_sandbox.timeline import iso
from shipsync_sandbox.world import Account


def shipment_view(account: Account, shipment: Resource, now: datetime | None = None) -> Resource:
    plan = account.plans.get(shipment["id"])
    stopped = account.stopped.get(shipment["id"])
    if plan is None and stopped is None:
        return shipment
    attributes, relationships = shipment_state(plan, now or account.shipment_as_of(shipment["id"])) if plan else ({}, {})
    stored_relationships = shipment["relationships"]
    if stopped is not None:
        attributes = {**attributes, "line_tracking_stopped_at": iso(stopped), "line_tracking_stopped_reason": "cancelled_by_user"}
        by = {"type": "user", "id": account.key_user_id} if account.key_user_id else None
        stored_relationships = {**stored_relationships, "line_tracking_stopped_by_user": {"data": by}}
    return {
        **shipment,
        "attributes": {**shipment["attributes"], **attributes},
        "relationships": {**relationships, **stored_relationships},
    }


def container_view(account: Account, container: Resource, now: datetime | None = None) -> Resource:
    plan = account.plans.get(account.shipment_of.get(container["id"], ""))
    if plan is None or container["id"] not in plan.containers:
        return container
    attributes, relationships = container_state(plan, plan.containers[container["id"]], now or account.as_of(container["id"]))
    return {
        **container,
        "attributes": {**container["attributes"], **attributes},
        "relationships": {**container["relationships"], **relationships},
    }


def tracking_request_view(account: Account, tracking_request: Resource) -> Resource:
    tracked = tracking_request["relationships"]["tracked_object"]["data"]
    shipment = account.resource("shipment", tracked["id"]) if tracked else None
    staged = account.staged.get(tracking_request["id"])
    if shipment is not None:
        numbers, tags = shipment["attributes"].get("ref_numbers"), shipment["attributes"].get("tags")
    else:
        numbers, tags = (staged.ref_numbers, staged.shipment_tags) if staged else ((), ())
    attributes = {**tracking_request["attributes"], "ref_numbers": list(numbers or []), "shipment_tags": list(tags or [])}
    return {**tracking_request, "attributes": attributes}


def webhook_view(webhook: Resource) -> Resource:
    attributes = dict(webhook["attributes"])
    attributes["headers"] = attributes.get("headers") or None  # the service: null when none were set
    return {**webhook, "attributes": attributes}


def view(account: Account, resource: Resource) -> Resource:
    """Any stored resource as served."""
    if resource.get("type") == "tracking_request":
        return tracking_request_view(account, resource)
    if resource.get("type") == "webhook":
        return webhook_view(resource)
    if resource.get("type") == "shipment":
        return shipment_view(account, resource)
    if resource.get("type") == "container":
        return container_view(account, resource)
    return resource
