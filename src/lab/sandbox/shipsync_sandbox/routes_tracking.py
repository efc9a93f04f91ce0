"""Sandbox tracking requests and shipments: listings with the service's filters, reads, and the
edits the service allows (a tracking request's `ref_number`; a shipment's `tags` and `ref_numbers`)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from shipsync_sandbox.filters import in_range, matches_number
from shipsync_sandbox.journey_state import stopped_at
from shipsync_sandbox.jsonapi_http import paged, read_document, single, unprocessable
from shipsync_sandbox.related import related_of
from shipsync_sandbox.resources import Resource
from shipsync_sandbox.routes_read import found, includes_of
from shipsync_sandbox.state import account_of, state_of
from shipsync_sandbox.timeline import iso
from shipsync_sandbox.views import shipment_view, tracking_request_view
from shipsync_sandbox.world import Account

TR_READ_ONLY = {
    "request_number",
    "request_type",
    "scac",
    "status",
    "created_at",
    "updated_at",
    "failed_reason",
    "is_retrying",
    "retry_count",
    "ref_numbers",
    "tags",
    "shipment_tags",
}
SHIPMENT_INCLUDES = (
    "containers",
    "pod_terminal",
    "port_of_lading",
    "port_of_discharge",
    "destination",
    "destination_terminal",
    "line_tracking_stopped_by_user",
)
TR_INCLUDES = ("tracked_object",)


def now_iso() -> str:
    return iso(datetime.now(UTC))


def _tracking_requests(account: Account) -> list[Resource]:
    return [tracking_request_view(account, tr) for tr in account.tracking_requests.values()]


async def list_tracking_requests(request: Request) -> Response:
    account, q = account_of(request), request.query_params
    includes = includes_of(request, TR_INCLUDES)
    items = [
        tr
        for tr in _tracking_requests(account)
        if all(q.get(f"filter[{name}]") in (None, tr["attributes"][name]) for name in ("request_number", "status", "scac"))
        and in_range(tr["attributes"]["updated_at"], request, "updated_at")
        and in_range(tr["attributes"]["created_at"], request, "created_at")
        and (
            q.get("q") is None
            or matches_number(q["q"], tr["attributes"]["request_number"], tr["attributes"]["ref_number"], *tr["attributes"]["ref_numbers"])
        )
    ]
    items.sort(key=lambda tr: (tr["attributes"]["updated_at"], tr["id"]))
    return paged(request, items, included_for=lambda page: related_of(account, page, includes) if includes else [])


async def get_tracking_request(request: Request) -> Response:
    account = account_of(request)
    tr = found(account.tracking_requests, request.path_params["id"], "TrackingRequest")
    view = tracking_request_view(account, tr)
    return single(view, request, included=related_of(account, [view], includes_of(request, TR_INCLUDES)))


async def patch_tracking_request(request: Request) -> Response:
    state, account = state_of(request), account_of(request)
    tr = found(account.tracking_requests, request.path_params["id"], "TrackingRequest")
    data = await read_document(request, "tracking_request")
    for name in data["attributes"]:
        pointer = f"/data/attributes/{name}"
        if name in ("tags", "ref_numbers", "shipment_tags"):
            raise unprocessable(f"{name} belong to the tracked shipment: change them with PATCH /shipments/{{id}}", pointer)
        if name in TR_READ_ONLY:
            raise unprocessable(f"{name} is read-only", pointer)
        if name != "ref_number":
            raise unprocessable(f"{name} is not an attribute of tracking_request (only ref_number can change)", pointer)
    if data["relationships"]:
        raise unprocessable("relationships of a tracking request cannot change", "/data/relationships")
    if "ref_number" in data["attributes"]:
        value = data["attributes"]["ref_number"]
        if value is not None and not isinstance(value, str):
            raise unprocessable("ref_number must be a string or null", "/data/attributes/ref_number")
        changed = value != tr["attributes"]["ref_number"]
        tr["attributes"] = {**tr["attributes"], "ref_number": value, "updated_at": now_iso()}
        if changed:
            kind = "tracking_request.failed" if tr["attributes"]["status"] == "failed" else "tracking_request.succeeded"
            shipment = account.resource("shipment", tr["relationships"]["tracked_object"]["data"]["id"])
            state.emit(account, kind, tracking_request_view(account, tr), [shipment] if shipment else [])
    return single(tracking_request_view(account, tr), request)


def _shipment_numbers(account: Account, shipment: Resource) -> list[str | None]:
    attributes = shipment["attributes"]
    containers = [account.resource("container", c["id"]) for c in shipment["relationships"]["containers"]["data"]]
    return [attributes["bill_of_lading_number"], *attributes["ref_numbers"], *(c["attributes"]["number"] for c in containers if c)]


async def list_shipments(request: Request) -> Response:
    account, q = account_of(request), request.query_params
    includes = includes_of(request, SHIPMENT_INCLUDES)
    items = account.of_type("shipment")
    if q.get("q"):
        items = [s for s in items if matches_number(q["q"], *_shipment_numbers(account, s))]
    if q.get("number"):
        items = [s for s in items if s["attributes"]["bill_of_lading_number"] == q["number"]]
    if (stopped := q.get("filter[tracking_stopped]")) is not None:
        items = [s for s in items if _tracking_stopped(account, s) == (stopped == "true")]
    items.sort(key=lambda s: (s["attributes"]["created_at"], s["id"]), reverse=True)  # newest first
    return paged(
        request,
        items,
        default_size=30,
        included_for=lambda page: related_of(account, page, includes) if includes else [],
        present=lambda s: shipment_view(account, s),
    )


def _tracking_stopped(account: Account, shipment: Resource) -> bool:
    plan = account.plans.get(shipment["id"])
    if plan is None:
        return shipment["attributes"].get("line_tracking_stopped_at") is not None
    return stopped_at(plan) <= account.shipment_as_of(shipment["id"])


def _shipment(request: Request) -> Resource:
    return found(account_of(request).by_type.get("shipment", {}), request.path_params["id"], "Shipment")


async def get_shipment(request: Request) -> Response:
    account = account_of(request)
    shipment = shipment_view(account, _shipment(request))
    return single(shipment, request, included=related_of(account, [shipment], includes_of(request, SHIPMENT_INCLUDES)))


def _string_list(value: Any, pointer: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise unprocessable("must be an array of strings", pointer)
    return value


async def patch_shipment(request: Request) -> Response:
    shipment = _shipment(request)
    data = await read_document(request, "shipment")
    changes: dict[str, list[str]] = {}
    for name, value in data["attributes"].items():
        pointer = f"/data/attributes/{name}"
        if name not in ("tags", "ref_numbers"):
            raise unprocessable(f"{name} cannot change (a shipment takes tags and ref_numbers)", pointer)
        values = _string_list(value, pointer)
        changes[name] = list(dict.fromkeys(values)) if name == "tags" else values
    if data["relationships"]:
        raise unprocessable("relationships of a shipment cannot change here", "/data/relationships")
    shipment["attributes"] = {**shipment["attributes"], **changes}
    return single(shipment_view(account_of(request), shipment), request)


TRACKING_ROUTES = [
    Route("/v2/tracking_requests", list_tracking_requests, methods=["GET"]),
    Route("/v2/tracking_requests/{id}", get_tracking_request, methods=["GET"]),
    Route("/v2/tracking_requests/{id}", patch_tracking_request, methods=["PATCH"]),
    Route("/v2/shipments", list_shipments, methods=["GET"]),
    Route("/v2/shipments/{id}", get_shipment, methods=["GET"]),
    Route("/v2/shipments/{id}", patch_shipment, methods=["PATCH"]),
]
