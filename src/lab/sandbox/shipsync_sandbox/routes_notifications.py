"""Sandbox `GET /webhook_notifications` and `GET /webhook_notifications/{id}` (api-facts: the
account's notifications, "for reconciling your data after your endpoint was down"): every
notification sent to one of the account's webhooks, in the listing order (newest first unless the
sandbox is told otherwise: the reference states none), with its delivery status (those
that failed too), each the `webhook_notification` resource its delivery carried. `include` takes
`webhook` and `reference_object`, carrying the types the reference lists for each answer."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from shipsync_sandbox.jsonapi_http import paged, single
from shipsync_sandbox.listing_order import in_order
from shipsync_sandbox.notification_log import Sent
from shipsync_sandbox.related import CARRIED
from shipsync_sandbox.resources import Resource
from shipsync_sandbox.routes_read import includes_of, listing_order, not_found
from shipsync_sandbox.state import account_of
from shipsync_sandbox.views import webhook_view
from shipsync_sandbox.world import Account

NOTIFICATION_INCLUDES = ("webhook", "reference_object")


def _included(account: Account, documents: list[dict[str, Any]], includes: list[str], answer: str) -> list[Resource]:
    """The webhooks and reference objects the notifications name (a reference object as its delivery carried it)."""
    carried = CARRIED[answer]
    found: dict[tuple[str, str], Resource] = {}
    for document in documents:
        relationships = document["data"]["relationships"]
        if "webhook" in includes:
            webhook = account.webhooks.get(relationships["webhook"]["data"]["id"])
            if webhook is not None:
                found[("webhook", webhook["id"])] = webhook_view(webhook)
        reference = relationships["reference_object"]["data"]
        if "reference_object" in includes and reference and reference["type"] in carried:
            sent = next((r for r in document.get("included") or [] if (r["type"], r["id"]) == (reference["type"], reference["id"])), None)
            if sent is not None:
                found[(reference["type"], reference["id"])] = sent
    return list(found.values())


async def list_notifications(request: Request) -> Response:
    account = account_of(request)
    includes = includes_of(request, NOTIFICATION_INCLUDES)
    documents: list[dict[str, Any]] = []

    def shown(sent: Sent) -> Resource:
        document = sent.document()
        documents.append(document)
        notification: Resource = document["data"]
        return notification

    return paged(
        request,
        in_order(account.notifications.oldest_first(), listing_order(request), identifier=lambda sent: sent.notification_id),
        default_size=25,
        present=shown,
        included_for=lambda page: _included(account, documents, includes, "webhook_notifications") if includes else [],
    )


async def get_notification(request: Request) -> Response:
    account = account_of(request)
    sent = account.notifications.get(request.path_params["id"])
    if sent is None:
        raise not_found("Couldn't find WebhookNotification")
    document = sent.document()
    included = _included(account, [document], includes_of(request, NOTIFICATION_INCLUDES), "webhook_notification")
    return single(document["data"], request, included=included)


NOTIFICATION_ROUTES = [
    Route("/v2/webhook_notifications", list_notifications, methods=["GET"]),
    Route("/v2/webhook_notifications/{id}", get_notification, methods=["GET"]),
]
