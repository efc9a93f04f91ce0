"""Sandbox shipments (extensions, docs/tracking-model.md): the listing with the service's filters
(newest first, as the reference states), one shipment, the edits the service allows (`tags`, a set
of strings, and `ref_numbers`), and stopping and resuming its tracking
(`PATCH /shipments/{id}/stop_tracking`, `/resume_tracking`: no body, 200 with the shipment; a stop
is also a `tracking_request.tracking_stopped` to the requests that track it)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from shipsync_sandbox.filters import matches_number
from shipsync_sandbox.jsonapi_http import ApiProblem, read_document, single, unprocessable
from shipsync_sandbox.listing_order import in_order
from shipsync_sandbox.resources import Resource
from shipsync_sandbox.routes_read import found, includes_of, listed, listing_order, one
from shipsync_sandbox.state import account_of, state_of
from shipsync_sandbox.views import shipment_view, stopped_since, tracking_request_view
from shipsync_sandbox.world import Account

SHIPMENT_INCLUDES = (
    "containers",
    "pod_terminal",
    "port_of_lading",
    "port_of_discharge",
    "destination",
    "destination_terminal",
    "line_tracking_stopped_by_user",
)


def _shipment_numbers(account: Account, shipment: Resource) -> list[str | None]:
    attributes = shipment["attributes"]
    containers = [account.resource("container", c["id"]) for c in shipment["relationships"]["containers"]["data"]]
    return [attributes["bill_of_lading_number"], *attributes["ref_numbers"], *(c["attributes"]["number"] for c in containers if c)]


def tracking_stopped(account: Account, shipment: Resource) -> bool:
    """Stopped by a user, or by the service a day after the last box's empty return."""
    return stopped_since(account, shipment) is not None


async def list_shipments(request: Request) -> Response:
    account, q = account_of(request), request.query_params
    includes = includes_of(request, SHIPMENT_INCLUDES)
    items = account.of_type("shipment")
    if q.get("q"):
        items = [s for s in items if matches_number(q["q"], *_shipment_numbers(account, s))]
    if q.get("number"):
        items = [s for s in items if s["attributes"]["bill_of_lading_number"] == q["number"]]
    if (stopped := q.get("filter[tracking_stopped]")) is not None:
        if stopped not in ("true", "false"):
            raise ApiProblem(
                422, "Unprocessable Entity", "filter[tracking_stopped] must be true or false", parameter="filter[tracking_stopped]"
            )
        items = [s for s in items if tracking_stopped(account, s) == (stopped == "true")]
    items = in_order(items, listing_order(request), created=lambda s: s["attributes"]["created_at"])
    return listed(request, items, includes, "shipments", shipment_view)


def _shipment(request: Request) -> Resource:
    return found(account_of(request).by_type.get("shipment", {}), request.path_params["id"], "Shipment")


async def get_shipment(request: Request) -> Response:
    return one(request, "shipment", "Shipment", SHIPMENT_INCLUDES, shipment_view)


def _string_list(value: Any, pointer: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise unprocessable("must be an array of strings", pointer)
    return value


async def patch_shipment(request: Request) -> Response:
    shipment = _shipment(request)
    data = await read_document(request, "shipment", type_required=False)
    changes: dict[str, list[str]] = {}
    for name, value in data["attributes"].items():
        pointer = f"/data/attributes/{name}"
        if name not in ("tags", "ref_numbers"):
            raise unprocessable(f"{name} cannot change (a shipment takes tags and ref_numbers)", pointer)
        values = _string_list(value, pointer)
        if name == "tags" and len(set(values)) < len(values):
            raise unprocessable("tags must be unique", pointer)
        changes[name] = values
    if data["relationships"]:
        raise unprocessable("relationships of a shipment cannot change here", "/data/relationships")
    shipment["attributes"] = {**shipment["attributes"], **changes}
    return single(shipment_view(account_of(request), shipment), request)


async def stop_tracking(request: Request) -> Response:
    state, account = state_of(request), account_of(request)
    shipment = _shipment(request)
    if shipment["id"] not in account.stopped:
        account.stopped[shipment["id"]] = datetime.now(UTC).replace(microsecond=0)
        view = shipment_view(account, shipment)
        for tracking in account.tracking_requests.values():
            tracked = ((tracking.get("relationships") or {}).get("tracked_object") or {}).get("data") or {}
            if tracked.get("id") == shipment["id"]:
                state.emit(account, "tracking_request.tracking_stopped", tracking_request_view(account, tracking), [view])
    return single(shipment_view(account, shipment), request)


async def resume_tracking(request: Request) -> Response:
    account = account_of(request)
    shipment = _shipment(request)
    account.stopped.pop(shipment["id"], None)
    return single(shipment_view(account, shipment), request)


SHIPMENT_ROUTES = [
    Route("/v2/shipments", list_shipments, methods=["GET"]),
    Route("/v2/shipments/{id}", get_shipment, methods=["GET"]),
    Route("/v2/shipments/{id}", patch_shipment, methods=["PATCH"]),
    Route("/v2/shipments/{id}/stop_tracking", stop_tracking, methods=["PATCH"]),
    Route("/v2/shipments/{id}/resume_tracking", resume_tracking, methods=["PATCH"]),
]
