"""How the sandbox shows stored resources whose members come from elsewhere, as the service does.

A tracking request shows its shipment's reference numbers and tags, or, until it has one, those it
carries for it (`ref_numbers: null` when it carries none: the reference's list is nullable), and
`tracking_stopped` once its shipment's tracking stopped; a webhook shows `headers: null` when none
were set; a shipment or container shows its journey as of the instant the account knows it at
(`journey_state.py`), and a shipment a user stopped tracking says so and names the user (the API
key's).
"""

from __future__ import annotations

from datetime import datetime

from shipsync_sandbox.journey_state import container_state, shipment_state, stopped_at
from shipsync_sandbox.resources import Resource
from shipsync_sandbox.timeline import iso
from shipsync_sandbox.world import Account


def stopped_since(account: Account, shipment: Resource) -> datetime | None:
    """When the shipment's tracking stopped: a user stopped it, or the line a day after the last
    box's empty return (as of the instant the account knows the shipment at); None while it tracks."""
    if shipment["id"] in account.stopped:
        return account.stopped[shipment["id"]]
    plan = account.plans.get(shipment["id"])
    if plan is None:
        stamp = shipment["attributes"].get("line_tracking_stopped_at")
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")) if stamp else None
    stop = stopped_at(plan)
    return stop if stop <= account.shipment_as_of(shipment["id"]) else None


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
    attributes = dict(tracking_request["attributes"])
    if shipment is not None:
        numbers, tags = shipment["attributes"].get("ref_numbers"), shipment["attributes"].get("tags")
        stopped = stopped_since(account, shipment) if attributes["status"] == "created" else None
        if stopped is not None:
            attributes["status"] = "tracking_stopped"
            attributes["updated_at"] = max(attributes["updated_at"], iso(stopped))
    else:
        numbers, tags = (staged.ref_numbers or None, staged.shipment_tags) if staged else (None, ())
    attributes["ref_numbers"] = list(numbers) if numbers is not None else None
    attributes["tags"] = list(tags or [])
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
