"""Sandbox reads of containers, their transport events, places and shipping lines (extensions,
docs/tracking-model.md): `GET /containers[/{id}]`, `GET /containers/{id}/transport_events` (past
milestones), `GET /containers/{id}/raw_events` (the carrier's messages, past and expected),
`GET /ports/{id}` (id or UN/LOCODE), `GET /terminals/{id}`, `GET /vessels/{id}`, `GET /shipping_lines`."""

from __future__ import annotations

from datetime import datetime

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from shipsync_sandbox.journey_state import raw_events
from shipsync_sandbox.jsonapi_http import base_url, json_response, render, single, whole
from shipsync_sandbox.listing_order import in_order
from shipsync_sandbox.places import Places
from shipsync_sandbox.related import container_events, related_of
from shipsync_sandbox.resources import Resource
from shipsync_sandbox.routes_read import found, includes_of, listed, listing_order, not_found, one
from shipsync_sandbox.state import account_of, state_of
from shipsync_sandbox.views import container_view
from shipsync_sandbox.world import Account

CONTAINER_INCLUDES = ("shipment", "pod_terminal", "pickup_facility", "transport_events")
EVENT_INCLUDES = ("location", "terminal", "vessel", "container", "shipment")


def refreshed_at(account: Account, container: Resource) -> datetime:
    """When the service last refreshed a container: its last check, which stops once its journey ends."""
    plan = account.plans.get(account.shipment_of.get(container["id"], ""))
    now = account.as_of(container["id"])
    if plan is None or container["id"] not in plan.containers:
        return now
    return min(now, plan.containers[container["id"]].steps[-1].at).replace(minute=0, second=0)


async def list_containers(request: Request) -> Response:
    account = account_of(request)
    includes = includes_of(request, CONTAINER_INCLUDES)
    # The reference's sentence contradicts itself ("sorted by creation date, with the most recently
    # refreshed containers appearing first"): the sandbox's own order is the second half's.
    items = in_order(
        account.of_type("container"),
        listing_order(request),
        created=lambda c: c["attributes"]["created_at"],
        stated=lambda oldest: sorted(oldest, key=lambda c: (refreshed_at(account, c), c["id"]), reverse=True),
    )
    return listed(request, items, includes, "containers", container_view)


def _container(request: Request) -> Resource:
    return found(account_of(request).by_type.get("container", {}), request.path_params["id"], "Container")


async def get_container(request: Request) -> Response:
    return one(request, "container", "Container", CONTAINER_INCLUDES, container_view)


async def list_transport_events(request: Request) -> Response:
    account = account_of(request)
    container = _container(request)
    includes = includes_of(request, EVENT_INCLUDES)
    events = container_events(account, container["id"])
    included = related_of(account, events, includes, "transport_events") if includes else []
    return whole(request, events, included)  # the operation declares no paging


async def list_raw_events(request: Request) -> Response:
    account = account_of(request)
    container = _container(request)
    plan = account.plans.get(account.shipment_of.get(container["id"], ""))
    box = plan.containers.get(container["id"]) if plan else None
    events = raw_events(plan, box, account.as_of(container["id"])) if plan and box else []
    return whole(request, events)  # the operation declares no paging


def _place(request: Request, kind: str, name: str) -> Resource:
    places: Places = state_of(request).world.places
    key = request.path_params["id"]
    if kind == "port":
        place = places.ports.get(key) or places.ports_by_code.get(key.upper())
    elif kind == "terminal":  # a rail terminal has no route of its own: it comes with what names it
        place = places.get("terminal", key)
    else:
        place = places.vessels.get(key)
    if place is None:
        raise not_found(f"Couldn't find {name}")
    return place


async def get_port(request: Request) -> Response:
    return single(_place(request, "port", "Port"), request)


async def get_terminal(request: Request) -> Response:
    return single(_place(request, "terminal", "Terminal"), request)


async def get_vessel(request: Request) -> Response:
    return single(_place(request, "vessel", "Vessel"), request)


async def list_shipping_lines(request: Request) -> Response:
    """Every supported carrier in one answer: the service does not page this listing."""
    base = base_url(request)
    lines = in_order(list(state_of(request).world.shipping_lines.values()), listing_order(request))
    return json_response({"data": [render(r, base) for r in lines], "links": {"self": str(request.url)}})


CONTAINER_ROUTES = [
    Route("/v2/containers", list_containers, methods=["GET"]),
    Route("/v2/containers/{id}", get_container, methods=["GET"]),
    Route("/v2/containers/{id}/transport_events", list_transport_events, methods=["GET"]),
    Route("/v2/containers/{id}/raw_events", list_raw_events, methods=["GET"]),
    Route("/v2/ports/{id}", get_port, methods=["GET"]),
    Route("/v2/terminals/{id}", get_terminal, methods=["GET"]),
    Route("/v2/vessels/{id}", get_vessel, methods=["GET"]),
    Route("/v2/shipping_lines", list_shipping_lines, methods=["GET"]),
]
