"""How the sandbox shows stored resources whose members come from elsewhere, as the service does.

A tracking request shows its shipment's reference numbers and tags (as `shipment_tags`, like
deliveries and newer answers); a webhook shows `headers: null` when none were set; a shipment or
container shows its journey as of the account's clock (`journey_state.py`).
"""

from __future__ import annotations

from datetime import datetime

from shipsync_sandbox.journey_state import container_state, shipment_state
from shipsync_sandbox.resources import Resource
from shipsync_sandbox.world import Account


def shipment_view(account: Account, shipment: Resource, now: datetime | None = None) -> Resource:
    plan = account.plans.get(shipment["id"])
    if plan is None:
        return shipment
    attributes, relationships = shipment_state(plan, now or account.shipment_as_of(shipment["id"]))
    return {
        **shipment,
        "attributes": {**shipment["attributes"], **attributes},
        "relationships": {**relationships, **shipment["relationships"]},
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
    shipment_id = tracking_request["relationships"]["tracked_object"]["data"]["id"]
    shipment = account.resource("shipment", shipment_id)
    shipment_attributes = shipment["attributes"] if shipment else {}
    attributes = {
        **tracking_request["attributes"],
        "ref_numbers": list(shipment_attributes.get("ref_numbers") or []),
        "shipment_tags": list(shipment_attributes.get("tags") or []),
    }
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
