"""Sandbox tracking requests: the listing with the service's filters (newest first, as the
reference states), one request (its tracked shipment included by default, as the reference says),
the one edit the service allows (`ref_number`, which shows in the request's `ref_numbers`: answers
carry no `ref_number`), creating one (`tracking_start.py`: it answers at once, pending, and
settles a while later) and the service's guess of what a number is (`infer_number`).

The listing declares no refusal: a filter value it cannot match (a status it does not know, a time
it cannot read) matches nothing."""

from __future__ import annotations

import asyncio
import json

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from shipsync_sandbox.filters import in_range, matches_number
from shipsync_sandbox.jsonapi_http import ApiProblem, json_response, paged, read_document, single, unprocessable
from shipsync_sandbox.listing_order import in_order
from shipsync_sandbox.number_inference import NotANumber, infer_result
from shipsync_sandbox.related import related_of
from shipsync_sandbox.resources import Resource
from shipsync_sandbox.routes_read import found, includes_of, listing_order
from shipsync_sandbox.state import SandboxState, account_of, state_of
from shipsync_sandbox.timeline import now_iso
from shipsync_sandbox.tracking_start import (
    add_reference_number,
    checked_request,
    duplicate_of,
    open_request,
    refuse_duplicate,
    settle,
    tracked_shipment,
)
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
}
TR_INCLUDES = ("tracked_object",)


def _includes(request: Request) -> list[str]:
    """What an answer includes: the tracked shipment always ('included by default'), and what
    `include` names."""
    return list(dict.fromkeys(["tracked_object", *includes_of(request, TR_INCLUDES)]))


def _tracking_requests(account: Account) -> list[Resource]:
    return [tracking_request_view(account, tr) for tr in account.tracking_requests.values()]


async def list_tracking_requests(request: Request) -> Response:
    account, q = account_of(request), request.query_params
    includes = _includes(request)
    items = [
        tr
        for tr in _tracking_requests(account)
        if all(q.get(f"filter[{name}]") in (None, tr["attributes"][name]) for name in ("request_number", "status", "scac"))
        and in_range(tr["attributes"]["updated_at"], request, "updated_at")
        and in_range(tr["attributes"]["created_at"], request, "created_at")
        and (q.get("q") is None or matches_number(q["q"], tr["attributes"]["request_number"], *(tr["attributes"]["ref_numbers"] or ())))
    ]
    items = in_order(items, listing_order(request), created=lambda tr: tr["attributes"]["created_at"])
    return paged(request, items, included_for=lambda page: related_of(account, page, includes, "tracking_requests"))


async def get_tracking_request(request: Request) -> Response:
    account = account_of(request)
    tr = found(account.tracking_requests, request.path_params["id"], "TrackingRequest")
    view = tracking_request_view(account, tr)
    return single(view, request, included=related_of(account, [view], _includes(request), "tracking_request"))


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
        if not isinstance(value, str) or not value.strip():
            raise unprocessable("ref_number must be a string", "/data/attributes/ref_number")
        shown = tracking_request_view(account, tr)["attributes"]["ref_numbers"] or []
        add_reference_number(account, tr, value.strip())
        tr["attributes"] = {**tr["attributes"], "updated_at": now_iso()}
        if value.strip() not in shown:
            kind = "tracking_request.failed" if tr["attributes"]["status"] == "failed" else "tracking_request.succeeded"
            shipment = tracked_shipment(account, tr)
            state.emit(account, kind, tracking_request_view(account, tr), [shipment] if shipment else [])
    return single(tracking_request_view(account, tr), request)


def _settle_later(state: SandboxState, account: Account, request_id: str) -> None:
    outcome = settle(state.world, account, request_id)
    if outcome is not None:
        kind, records = outcome
        tr = account.tracking_requests[request_id]
        state.emit(account, kind, tracking_request_view(account, tr), [shipment_view(account, r) for r in records])


async def create_tracking_request(request: Request) -> Response:
    state, account = state_of(request), account_of(request)
    new = checked_request(state.world, account, await read_document(request, "tracking_request"))
    if (existing := duplicate_of(account, new)) is not None:
        raise refuse_duplicate(new, existing)
    tr = open_request(account, new)
    # The service looks the number up (and detects the carrier) a while after answering.
    asyncio.get_running_loop().call_later(state.options.tracking_delay_s, _settle_later, state, account, tr["id"])
    return single(tracking_request_view(account, tr), request, status=201)


async def infer_number(request: Request) -> Response:
    """`{"number": "..."}` -> the service's guess (`infer_number_results`), or 422."""
    raw = await request.body()
    try:
        body = json.loads(raw) if raw else None
    except ValueError:
        raise ApiProblem(400, "Bad Request", "request body is not valid JSON", pointer="") from None
    number = body.get("number") if isinstance(body, dict) else None
    if not isinstance(number, str) or not number.strip():
        raise unprocessable("number is required", "/number")
    try:
        return json_response({"data": infer_result(number)})
    except NotANumber as refused:
        raise ApiProblem(422, "Unprocessable Entity", str(refused), pointer="/number") from None


TRACKING_ROUTES = [
    Route("/v2/tracking_requests", list_tracking_requests, methods=["GET"]),
    Route("/v2/tracking_requests", create_tracking_request, methods=["POST"]),
    Route("/v2/tracking_requests/infer_number", infer_number, methods=["POST"]),
    Route("/v2/tracking_requests/{id}", get_tracking_request, methods=["GET"]),
    Route("/v2/tracking_requests/{id}", patch_tracking_request, methods=["PATCH"]),
]
