"""How the sandbox shows stored resources whose members come from elsewhere, as the service does.

A tracking request shows its shipment's reference numbers and tags (as `shipment_tags`, like
deliveries and newer answers); a webhook shows `headers: null` when none were set.
"""

from __future__ import annotations

from shipsync.sandbox.world import Account, Resource


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
    return resource
