"""Sandbox webhooks: register and delete (the spec's), list, read and change (extensions), and
`GET /webhooks/events`, the kinds the calling account may subscribe to (its plan's)."""

from __future__ import annotations

import secrets
import uuid
from typing import Any
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from shipsync_sandbox.event_kinds import not_offered
from shipsync_sandbox.jsonapi_http import paged, read_document, single, unprocessable, whole
from shipsync_sandbox.listing_order import in_order
from shipsync_sandbox.resources import Resource, stable_id
from shipsync_sandbox.routes_read import found, listing_order
from shipsync_sandbox.state import account_of
from shipsync_sandbox.timeline import now_iso
from shipsync_sandbox.views import webhook_view
from shipsync_sandbox.world import Account

CATEGORIES = (
    ("Container transport", "container.transport."),
    ("Container", "container."),
    ("Shipment", "shipment."),
    ("Tracking request", "tracking_request."),
    ("Document", "document."),
)


def _describe(kind: str) -> str:
    return kind.rsplit(".", 1)[-1].replace("_", " ").capitalize() + f" ({kind.split('.', 1)[0].replace('_', ' ')})"


def event_categories(account: Account) -> list[Resource]:
    grouped: dict[str, list[str]] = {}
    for kind in account.event_kinds:
        name = next(title for title, prefix in CATEGORIES if kind.startswith(prefix)) if "." in kind else "Other"
        grouped.setdefault(name, []).append(kind)
    return [
        {
            "id": stable_id("webhook_event_category", name),
            "type": "webhook_event_category",
            "attributes": {"name": name, "events": [{"name": k, "description": _describe(k)} for k in kinds]},
        }
        for name, kinds in grouped.items()
    ]


def _checked(account: Account, attributes: dict[str, Any], *, creating: bool) -> dict[str, Any]:
    checked: dict[str, Any] = {}
    if creating or "url" in attributes:
        url = attributes.get("url")
        parts = urlsplit(url) if isinstance(url, str) else None
        if parts is None or parts.scheme not in ("http", "https") or not parts.netloc:
            raise unprocessable("url must be an http(s) URL", "/data/attributes/url")
        checked["url"] = url
    if creating or "events" in attributes:
        events = attributes.get("events")
        if not isinstance(events, list) or not events or not all(isinstance(e, str) for e in events):
            raise unprocessable("events must be a non-empty array of event kinds", "/data/attributes/events")
        if len(set(events)) < len(events):
            raise unprocessable("events must be unique", "/data/attributes/events")
        if bad := not_offered(events, account.event_kinds):
            raise unprocessable(f"unknown event kinds: {', '.join(bad)}", "/data/attributes/events")
        checked["events"] = list(events)
    if creating or "active" in attributes:
        active = attributes.get("active")
        if not isinstance(active, bool):
            raise unprocessable("active is required: true or false", "/data/attributes/active")
        checked["active"] = active
    if creating or "headers" in attributes:
        headers = attributes.get("headers") or []
        if not isinstance(headers, list) or not all(
            isinstance(h, dict) and isinstance(h.get("name"), str) and isinstance(h.get("value"), str) for h in headers
        ):
            raise unprocessable("headers must be an array of {name, value}", "/data/attributes/headers")
        checked["headers"] = [{"name": h["name"], "value": h["value"]} for h in headers]
    unknown = set(attributes) - {"url", "events", "active", "headers"}
    if unknown:
        raise unprocessable(f"{sorted(unknown)[0]} is not an attribute a webhook takes", f"/data/attributes/{sorted(unknown)[0]}")
    return checked


async def create_webhook(request: Request) -> Response:
    account = account_of(request)
    attributes = _checked(account, (await read_document(request, "webhook"))["attributes"], creating=True)
    webhook_id = str(uuid.uuid4())
    webhook = {
        "id": webhook_id,
        "type": "webhook",
        "attributes": {**attributes, "secret": secrets.token_hex(32), "created_at": now_iso()},
        "links": {"self": f"/v2/webhooks/{webhook_id}"},
    }
    account.webhooks[webhook_id] = webhook
    return single(webhook_view(webhook), request, status=201)


def _webhook(request: Request) -> Resource:
    return found(account_of(request).webhooks, request.path_params["id"], "Webhook")


async def list_webhooks(request: Request) -> Response:
    webhooks = in_order([webhook_view(w) for w in account_of(request).webhooks.values()], listing_order(request))
    return paged(request, webhooks)  # with secrets, as the service


async def get_webhook(request: Request) -> Response:
    return single(webhook_view(_webhook(request)), request)


async def patch_webhook(request: Request) -> Response:
    webhook, account = _webhook(request), account_of(request)
    attributes = _checked(account, (await read_document(request, "webhook"))["attributes"], creating=False)
    if attributes.get("active"):
        account.failures_in_a_row.pop(webhook["id"], None)
    webhook["attributes"] = {**webhook["attributes"], **attributes}
    return single(webhook_view(webhook), request)


async def delete_webhook(request: Request) -> Response:
    del account_of(request).webhooks[_webhook(request)["id"]]
    return Response(status_code=200)


async def list_event_kinds(request: Request) -> Response:
    return whole(request, event_categories(account_of(request)))


WEBHOOK_ROUTES = [
    Route("/v2/webhooks", list_webhooks, methods=["GET"]),
    Route("/v2/webhooks", create_webhook, methods=["POST"]),
    Route("/v2/webhooks/events", list_event_kinds, methods=["GET"]),
    Route("/v2/webhooks/{id}", get_webhook, methods=["GET"]),
    Route("/v2/webhooks/{id}", patch_webhook, methods=["PATCH"]),
    Route("/v2/webhooks/{id}", delete_webhook, methods=["DELETE"]),
]
