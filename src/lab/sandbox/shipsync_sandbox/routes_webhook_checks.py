"""What a receiver's operator checks before relying on webhooks: a test delivery
(`POST /webhooks/trigger`: one example notification of an event kind, sent at once to a URL, signed
with the secret given, answered with how the attempt went) and the addresses deliveries come from
(`GET /webhooks/ips`).

The reference says the trigger's URL must be HTTPS. The sandbox also takes plain HTTP to a loopback
address (its receivers in tests and demos have no certificate); any other URL that is not HTTPS is
refused with 422, as is an event kind the account may not subscribe to. The example is a real
notification of the account's data where its journeys have one (the first container that has met
the event), else of its newest record of that kind.
"""

from __future__ import annotations

import ipaddress
import json
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

import httpx
import orjson
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from shipsync_sandbox.deliver import ACCEPTED, envelope, signature
from shipsync_sandbox.journeys import journey_events, shipment_events
from shipsync_sandbox.jsonapi_http import ApiProblem, json_response
from shipsync_sandbox.resources import Resource
from shipsync_sandbox.state import account_of, state_of
from shipsync_sandbox.timeline import iso
from shipsync_sandbox.views import container_view, shipment_view, tracking_request_view
from shipsync_sandbox.world import Account

# Where the sandbox's deliveries come from: it runs on this machine.
DELIVERY_ADDRESSES = ("127.0.0.1",)
# How many containers a test delivery looks through for an event of the kind asked.
EXAMPLE_SEARCH = 60
TRACKING_STATUS_OF = {
    "tracking_request.succeeded": ("created", "tracking_stopped"),
    "tracking_request.failed": ("failed",),
    "tracking_request.awaiting_manifest": ("awaiting_manifest",),
    "tracking_request.tracking_stopped": ("tracking_stopped",),
}


def _refused(detail: str) -> ApiProblem:
    return ApiProblem(422, "Unprocessable Entity", detail)


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _target(url: Any) -> str:
    parts = urlsplit(url) if isinstance(url, str) else None
    if parts is None or not parts.netloc or parts.scheme not in ("https", "http"):
        raise _refused("url must be an HTTPS URL")
    if parts.scheme == "http" and not _loopback(parts.hostname or ""):
        raise _refused("url must be HTTPS")
    return str(url)


def example(account: Account, kind: str) -> tuple[Resource, list[Resource]]:
    """An example notification of `kind` from the account's own data: its reference object and the
    records it includes."""
    if kind in TRACKING_STATUS_OF:
        requests = [tracking_request_view(account, tr) for tr in account.tracking_requests.values()]
        shown = next((tr for tr in reversed(requests) if tr["attributes"]["status"] in TRACKING_STATUS_OF[kind]), None)
        if shown is not None:
            tracked = shown["relationships"]["tracked_object"]["data"]
            shipment = account.resource("shipment", tracked["id"]) if tracked else None
            return shown, [shipment_view(account, shipment)] if shipment else []
    for container in account.of_type("container")[:EXAMPLE_SEARCH]:
        plan = account.plans.get(account.shipment_of.get(container["id"], ""))
        shipment = account.resource("shipment", plan.shipment_id) if plan else None
        if plan is None or shipment is None:
            continue
        now = account.as_of(container["id"])
        own: list[tuple[datetime, str, Resource, list[Resource], Resource | None]]
        own = [(at, k, ref, places, container) for at, k, ref, places in journey_events(account, container, plan)]
        own += [(at, k, ref, places, None) for at, k, ref, places in shipment_events(account, plan, None)]
        for at, event, reference, places, box in own:
            if event == kind and at <= now:
                records = [container_view(account, box, at)] if box is not None else []
                return reference, [*records, shipment_view(account, shipment, at), *places]
    if kind.startswith("document.") and account.documents:
        document = next(iter(account.documents.values()))
        return document, []
    raise _refused(f"this account has no {kind} to show")


async def trigger(request: Request) -> Response:
    account = account_of(request)
    try:
        body = json.loads(await request.body() or b"null")
    except ValueError:
        raise _refused("the body must be JSON") from None
    if not isinstance(body, dict):
        raise _refused("the body must be {url, event, secret?}")
    url, event, secret = _target(body.get("url")), body.get("event"), body.get("secret")
    if not isinstance(event, str) or event not in account.event_kinds:
        raise _refused(f"event must be a webhook event kind (not {event!r})")
    if secret is not None and not isinstance(secret, str):
        raise _refused("secret must be a string")
    reference, included = example(account, event)
    document = envelope("00000000-0000-0000-0000-000000000000", event, reference, [reference, *included], iso(account.clock))
    payload = orjson.dumps(document)
    headers = {"Content-Type": "application/json"}
    if secret:
        headers["X-T49-Webhook-Signature"] = signature(secret, payload)
    result: dict[str, Any] = {"url": url, "succeeded": False, "error": None, "status_code": None, "request_headers": headers}
    result |= {"request_body": payload.decode(), "response_headers": None, "response_body": None}
    try:
        async with httpx.AsyncClient(timeout=10) as client:
            answer = await client.post(url, content=payload, headers=headers)
    except httpx.HTTPError as exc:
        result["error"] = f"{type(exc).__name__}: the delivery did not get an answer"
        return json_response(result)
    result |= {"succeeded": answer.status_code in ACCEPTED, "status_code": answer.status_code}
    result |= {"response_headers": dict(answer.headers), "response_body": answer.text}
    if answer.status_code not in ACCEPTED:
        result["error"] = f"the endpoint answered {answer.status_code}"
    return json_response(result)


async def delivery_addresses(request: Request) -> Response:
    started = state_of(request).world.start
    return json_response({"webhook_notification_ips": list(DELIVERY_ADDRESSES), "last_updated": iso(started)})


WEBHOOK_CHECK_ROUTES = [
    Route("/v2/webhooks/trigger", trigger, methods=["POST"]),
    Route("/v2/webhooks/ips", delivery_addresses, methods=["GET"]),
]
