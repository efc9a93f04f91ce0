"""Sandbox parties, the customers a tracking request names (`relationships.customer`): the listing
(paged, in the listing order), one party, and creating one (`company_name` required, else 422 as
the reference declares)."""

from __future__ import annotations

import uuid

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from shipsync_sandbox.jsonapi_http import paged, read_document, single, unprocessable
from shipsync_sandbox.listing_order import in_order
from shipsync_sandbox.routes_read import found, listing_order
from shipsync_sandbox.seed import party_resource
from shipsync_sandbox.state import account_of


async def list_parties(request: Request) -> Response:
    return paged(request, in_order(list(account_of(request).parties.values()), listing_order(request)))


async def get_party(request: Request) -> Response:
    return single(found(account_of(request).parties, request.path_params["id"], "Party"), request)


async def create_party(request: Request) -> Response:
    account = account_of(request)
    attributes = (await read_document(request, "party", type_required=False))["attributes"]
    name = attributes.get("company_name")
    if not isinstance(name, str) or not name.strip():
        raise unprocessable("company_name can't be blank", "/data/attributes/company_name")
    party = party_resource(str(uuid.uuid4()), name.strip())
    account.parties[party["id"]] = party
    return single(party, request, status=201)


PARTY_ROUTES = [
    Route("/v2/parties", list_parties, methods=["GET"]),
    Route("/v2/parties", create_party, methods=["POST"]),
    Route("/v2/parties/{id}", get_party, methods=["GET"]),
]
