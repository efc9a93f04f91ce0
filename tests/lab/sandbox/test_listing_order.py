"""Every listing answers in the order the sandbox is made with (`SandboxOptions.listing_order`), so
tests can show a client depends on none: newest first, oldest first, by id; and by default the
order the reference states (shipments and tracking requests newest first, containers most recently
refreshed first), newest first where it states none."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from shipsync_sandbox import SandboxApp, SandboxOptions, create_app
from shipsync_sandbox.event_kinds import EVENT_KINDS
from shipsync_sandbox.journeys import simulate
from shipsync_sandbox.listing_order import LISTING_ORDERS
from support.sandboxes import K1

AUTH = {"Authorization": f"Token {K1}"}
# Listings whose records say when they were made: their `created_at` orders them.
STAMPED = ("documents", "shipments", "containers", "tracking_requests", "webhook_notifications", "webhooks")
# Listings of records made in the order the sandbox stored them (no stamp of their own).
MADE_IN_ORDER = ("custom_fields", "custom_field_definitions", "parties", "shipping_lines")


def _app(order: str) -> SandboxApp:
    app = create_app(SandboxOptions(api_keys=(K1,), documents=40, custom_field_values=30, listing_order=order, delivery_retry_base_s=0.0))  # type: ignore[arg-type]

    async def seed() -> None:
        app.deliverer._client = httpx.AsyncClient(transport=httpx.MockTransport(lambda request: httpx.Response(200)))
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://sandbox.test/v2", headers=AUTH) as client:  # type: ignore[arg-type]
            for n in range(3):
                hook = {"url": f"https://hooks.test/{n}", "events": list(EVENT_KINDS), "active": True}
                assert (await client.post("/webhooks", json={"data": {"type": "webhook", "attributes": hook}})).status_code == 201
        simulate(app.state.world.accounts[K1], app.deliverer.emit, containers=3)
        while app.deliverer.pending:
            await asyncio.sleep(0.01)

    asyncio.run(seed())
    return app


def listed(app: SandboxApp, path: str) -> list[dict[str, Any]]:
    """Every item of a listing, page by page as a client follows `links.next`."""

    async def read() -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://sandbox.test/v2", headers=AUTH) as client:  # type: ignore[arg-type]
            url: str | None = f"{path}{'&' if '?' in path else '?'}page[size]=7"
            while url:
                body = (await client.get(url)).raise_for_status().json()
                items += body["data"]
                url = (body.get("links") or {}).get("next")
        return items

    return asyncio.run(read())


@pytest.fixture(scope="module")
def apps() -> dict[str, SandboxApp]:
    return {order: _app(order) for order in LISTING_ORDERS}


def _made(item: dict[str, Any]) -> str:
    return str(item["attributes"]["created_at"])


def _check(items: list[dict[str, Any]], order: str, made: Callable[[dict[str, Any]], Any] | None, oldest: list[str]) -> None:
    ids = [i["id"] for i in items]
    assert len(ids) > 2 and len(set(ids)) == len(ids)
    if order == "id":
        assert ids == sorted(ids)
    elif made is not None:
        stamps = [made(i) for i in items]
        assert stamps == sorted(stamps, reverse=order == "newest")
    else:
        assert ids == (oldest if order == "oldest" else oldest[::-1])


@pytest.mark.parametrize("order", ["newest", "oldest", "id"])
@pytest.mark.parametrize("listing", [*STAMPED, *MADE_IN_ORDER, "options", "entity_custom_fields"])
def test_every_listing_answers_in_the_order_asked(apps: dict[str, SandboxApp], listing: str, order: str) -> None:
    app = apps[order]
    account = app.state.world.accounts[K1]
    if listing == "options":
        priority = next(d for d in account.definitions.values() if d["attributes"]["api_slug"] == "priority")
        path, oldest = f"/custom_field_definitions/{priority['id']}/options", [o["id"] for o in account.options[priority["id"]]]
    elif listing == "entity_custom_fields":
        entity = next(iter(account.custom_fields.values()))["relationships"]["entity"]["data"]
        path = f"/{entity['type']}s/{entity['id']}/custom_fields"
        oldest = [v["id"] for v in account.custom_fields.of_entity((entity["type"], entity["id"]))]
    else:
        path = f"/{listing}"
        stored = {
            "custom_fields": account.custom_fields,
            "custom_field_definitions": account.definitions,
            "parties": account.parties,
            "shipping_lines": app.state.world.shipping_lines,
        }
        oldest = list(stored[listing]) if listing in stored else []
    _check(listed(app, path), order, _made if listing in STAMPED else None, oldest)


def test_by_default_each_listing_answers_in_the_order_the_reference_states(apps: dict[str, SandboxApp]) -> None:
    app = apps["reference"]
    for listing in ("shipments", "tracking_requests", "documents", "webhook_notifications"):
        stamps = [_made(i) for i in listed(app, f"/{listing}")]
        assert stamps == sorted(stamps, reverse=True), listing  # newest first (stated, or where none is)
    refreshed = [
        max(filter(None, (c["attributes"]["pod_last_tracking_request_at"], c["attributes"]["shipment_last_tracking_request_at"])))
        for c in listed(app, "/containers")
    ]
    assert refreshed == sorted(refreshed, reverse=True)  # most recently refreshed first
    sorted_documents = [_made(i) for i in listed(app, "/documents?sort=created_at")]
    assert sorted_documents == sorted(sorted_documents)  # a documents `sort` answers in that sort, whatever the order
    assert json.dumps(listed(apps["oldest"], "/documents?sort=-created_at")) == json.dumps(listed(app, "/documents?sort=-created_at"))
