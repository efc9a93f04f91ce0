"""Sandbox parties (`GET /parties`): the account's customers, the parties a tracking request
names as its `customer`; paged as the reference pages them (25 a page by default)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from shipsync_sandbox.jsonapi_http import paged
from shipsync_sandbox.state import account_of


async def list_parties(request: Request) -> Response:
    parties = sorted(account_of(request).by_type.get("party", {}).values(), key=lambda p: (p["attributes"]["company_name"], p["id"]))
    return paged(request, parties)


PARTY_ROUTES = [Route("/v2/parties", list_parties, methods=["GET"])]
