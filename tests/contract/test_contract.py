"""Every answer of the sandbox follows our own JSON Schemas of the service's resources, written from
the facts pages (tests/contract/schemas): reads, listings, writes, errors, and webhook delivery
bodies. The schemas would have caught issue 12's items 2, 9 and 10 (checked below on those shapes).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from jsonschema import Draft202012Validator

from shipsync.api import AsyncShipsyncClient
from shipsync.api.tracking_reads import CONTAINER_INCLUDES, SHIPMENT_INCLUDES, TRANSPORT_EVENT_INCLUDES
from shipsync.errors import ApiError
from shipsync.webhooks.event_kinds import EVENT_KINDS
from shipsync_sandbox import SandboxOptions, create_app
from shipsync_sandbox.journeys import simulate
from shipsync_sandbox.limits import RateLimit
from support.contract_schemas import SCHEMAS, answer_validator
from support.sandbox_transport import IN_PROCESS_URL, SandboxTransport
from support.sandboxes import K1


def problems(name: str, body: Any) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in answer_validator(name).iter_errors(body)]


def kind_of(status: int, body: Any) -> str:
    if status >= 400:
        return "errors"
    if isinstance(body.get("data"), list):
        return "listing" if "meta" in body else "collection"  # GET /shipping_lines is not paged
    return "single"


def test_the_schemas_are_valid_draft_2020_12() -> None:
    for path in SCHEMAS.glob("*.json"):
        Draft202012Validator.check_schema(json.loads(path.read_text()))


async def _scenario(client: AsyncShipsyncClient, app: Any) -> None:
    """Every operation shipsync uses, and the failures it meets, through the real client."""
    account = app.state.world.accounts[K1]
    document_id = next(iter(account.documents))
    tr_id = next(iter(account.tracking_requests))
    shipment_id = account.of_type("shipment")[0]["id"]
    container_id = account.of_type("container")[0]["id"]
    webhook = await client.webhooks.create("https://hooks.example.test/w", EVENT_KINDS)  # first: later edits are delivered
    [p async for p in client.documents.list_pages(page_size=10, max_pages=2)]
    [p async for p in client.documents.list_pages(sort="-added_by", reference="REF", page_size=5, max_pages=1)]
    await client.documents.get(document_id)
    await client.documents.get_page(document_id, include=["current_extraction"])
    await client.metro_areas.get("USLAX")
    await client.document_schemas.get("commercial_invoice@2026-03-23")
    await client.document_schemas.get("arrival_notice@2026-10-01")
    await client.tracking_requests.list(q="MAEU")
    [p async for p in client.tracking_requests.list_pages(include="tracked_object", max_pages=1)]
    await client.tracking_requests.get(tr_id)
    await client.tracking_requests.update(tr_id, ref_number="REQ-1")
    [p async for p in client.shipments.list_pages(include="containers", page_size=5, max_pages=1)]
    await client.shipments.get_page(shipment_id, include="containers")
    await client.shipments.update(shipment_id, tags=["a", "b"], ref_numbers=["PO-1"])
    inland_id = next(
        c["id"]
        for c in account.of_type("container")
        if (box := account.plans[account.shipment_of[c["id"]]].containers[c["id"]]).rail
        and (box.at("container.transport.rail_arrived") or account.clock) < account.clock
    )
    await _tracking_reads(client, container_id, inland_id)
    definitions = client.custom_field_definitions
    await definitions.list(display_name="Pri")
    made = await definitions.create(entity_type="Container", api_slug="broker", display_name="Broker", data_type="enum")
    await definitions.update(made.id, {"display_name": "Customs broker", "validation": {"required": False, "case": "any"}})
    await definitions.get(made.id)
    option = await definitions.create_option(made.id, label="Acme", value="acme", position=0)
    await definitions.update_option(made.id, option.id, label="Acme Corp", position=1)
    await definitions.options(made.id)
    fields = client.custom_fields
    value = await fields.create(entity_type="container", entity_id=container_id, api_slug="broker", value="acme")
    await fields.update(value.id, "acme")
    await fields.set_on_entity("tracking_request", tr_id, "request_owner", "Ana")
    await fields.set_on_entity("shipment", shipment_id, "consignee", "Globex")
    await fields.update_on_entity("tracking_request", tr_id, "request_owner", "Ben")
    await fields.of_entity("tracking_request", tr_id)
    await fields.list()
    await fields.delete(value.id)
    await definitions.delete_option(made.id, option.id)
    await client.webhooks.update(webhook.id, {"headers": [{"name": "X-Team", "value": "ops"}]})
    await client.webhooks.get(webhook.id)
    await client.webhooks.list_raw()
    await client.webhooks.event_kinds()
    for failing in (
        client.document_schemas.get("commercial_invoice@1999-01-01"),
        client.documents.get("no-such-document"),
        client.metro_areas.get("ZZZZZ"),
        fields.create(entity_type="container", entity_id=container_id, api_slug="priority", value="rush"),
        definitions.create(entity_type="Cargo", api_slug="nope", display_name="N", data_type="short_text"),
        client.transport.write("PATCH", f"tracking_requests/{tr_id}", {"data": {"type": "tracking_request", "attributes": {"tags": []}}}),
        client.transport.get_page("documents", {"include": "bogus"}),
    ):
        with pytest.raises(ApiError):
            await failing


async def _tracking_reads(client: AsyncShipsyncClient, container_id: str, inland_id: str) -> None:
    """Shipments, containers, their events (an inland box's name its rail ramp) and every place and
    carrier they name, with every include."""
    shipments = [p async for p in client.shipments.list_pages(include=",".join(SHIPMENT_INCLUDES), page_size=10, max_pages=2)]
    await client.shipments.get_page(shipments[0].data[0]["id"], include=",".join(SHIPMENT_INCLUDES))
    containers = [p async for p in client.containers.list_pages(include=CONTAINER_INCLUDES, page_size=10, max_pages=2)]
    one = await client.containers.get_page(container_id, include=CONTAINER_INCLUDES)
    events = await client.containers.transport_events(inland_id, include=TRANSPORT_EVENT_INCLUDES)
    places = {(r["type"], r["id"]) for page in [*shipments, *containers, one, events] for r in page.included}
    for type_, id_ in sorted(places):
        if type_ in ("port", "terminal", "vessel"):  # a rail terminal has no route of its own
            await client.places.page_of(type_, id_)
    await client.places.port_page("USLAX")
    await client.shipping_lines.list_page()
    for failing in (client.containers.get_page("no-such-container"), client.places.vessel_page("no-such-vessel")):
        with pytest.raises(ApiError):
            await failing


@pytest.mark.slow
def test_every_sandbox_answer_follows_the_schemas() -> None:
    app = create_app(SandboxOptions(api_keys=(K1, "other-key"), documents=12, rate_limit=None))
    transport = SandboxTransport(app)
    deliveries: list[Any] = []

    async def collect(request: httpx.Request) -> httpx.Response:
        deliveries.append(json.loads(request.content))
        return httpx.Response(200)

    async def run() -> None:
        app.deliverer._client = httpx.AsyncClient(transport=httpx.MockTransport(collect))
        async with AsyncShipsyncClient(IN_PROCESS_URL, K1, rate_limit=None, http_transport=transport) as client:
            await _scenario(client, app)
        async with AsyncShipsyncClient(IN_PROCESS_URL, "wrong-key", rate_limit=None, http_transport=transport) as stranger:
            with pytest.raises(ApiError):
                await stranger.metro_areas.get("USLAX")
        limited = SandboxTransport(create_app(SandboxOptions(api_keys=(K1,), documents=1, rate_limit=RateLimit(1, 60))))
        async with httpx.AsyncClient(transport=limited) as raw:
            for _ in range(2):  # the second is a 429
                await raw.get(f"{IN_PROCESS_URL}/metro_areas/USLAX", headers={"Authorization": f"Token {K1}"})
        transport.exchanges.extend(limited.exchanges)
        simulate(app.state.world.accounts[K1], app.deliverer.emit, containers=4)
        while app.deliverer.pending:
            await asyncio.sleep(0.01)

    asyncio.run(run())
    assert {kind_of(e.status, e.body) for e in transport.exchanges if e.body is not None} == {"errors", "listing", "single", "collection"}
    served = {r["type"] for e in transport.exchanges if e.status == 200 for r in _resources(e.body)}
    assert served >= {
        "shipment",
        "container",
        "transport_event",
        "port",
        "terminal",
        "rail_terminal",
        "vessel",
        "shipping_line",
        "metro_area",
    }
    assert {e.status for e in transport.exchanges} >= {200, 201, 400, 401, 404, 422, 429}
    found = [
        f"{e.method} {e.path} {e.status}: {problem}"
        for e in transport.exchanges
        if e.body is not None
        for problem in problems(kind_of(e.status, e.body), e.body)
    ]
    assert not found, "\n".join(found[:40])
    kinds = {d["data"]["attributes"]["event"] for d in deliveries}
    assert len(deliveries) > 40 and "tracking_request.succeeded" in kinds and "container.transport.delivered" in kinds
    found = [f"{d['data']['attributes']['event']}: {p}" for d in deliveries for p in problems("delivery", d)]
    assert not found, "\n".join(found[:40])


def _resources(body: Any) -> list[dict[str, Any]]:
    if not isinstance(body, dict):
        return []
    data = body.get("data")
    return [*(data if isinstance(data, list) else [data] if isinstance(data, dict) else []), *(body.get("included") or [])]


def _listing(meta: Any) -> dict[str, Any]:
    return {"data": [], "links": {"self": "s", "first": "f", "last": "l"}, "meta": meta}


def _single(resource: dict[str, Any]) -> dict[str, Any]:
    return {"data": resource, "links": {"self": "s"}}


OLD_SHAPES = {
    "item 2: a definition answered with Cargo": _single(
        {
            "id": "d",
            "type": "custom_field_definition",
            "attributes": {"entity_type": "Cargo", "api_slug": "x", "display_name": "X", "data_type": "enum"},
        }
    ),
    "item 9: an email submission with from_address and received_at": _single(
        {
            "id": "e",
            "type": "email_submission",
            "attributes": {"from_address": "a@b", "subject": "s", "received_at": "2026-01-05T08:00:00Z"},
        }
    ),
    "item 9: an extraction with status, fields and a <type>@<date> version": _single(
        {
            "id": "r",
            "type": "document_representation",
            "attributes": {
                "schema_version": "commercial_invoice@2026-03-23",
                "status": "extracted",
                "extracted_at": "2026-01-05T08:00:00Z",
                "fields": {"reference": "CO-1"},
            },
        }
    ),
    "item 10: paging meta with page_count, page_number and page_size": _listing(
        {"total": 3, "page_count": 1, "page_number": 1, "page_size": 25}
    ),
    "item 10: a document schema without links.self": _single(
        {
            "id": "commercial_invoice@2026-03-23",
            "type": "document_schema",
            "attributes": {
                "document_type": "commercial_invoice",
                "schema_version": "2026.03.23",
                "full_version": "commercial_invoice@2026-03-23",
                "current": True,
                "draft": False,
            },
        }
    ),
    "item 10: a webhook listing without secrets": {
        **_listing({"size": 25, "total": 1}),
        "data": [
            {
                "id": "w",
                "type": "webhook",
                "attributes": {"url": "https://x/h", "active": True, "events": ["container.created"], "headers": None},
            }
        ],
    },
    "item 10: a webhook with no events": _single(
        {"id": "w", "type": "webhook", "attributes": {"url": "https://x/h", "active": True, "events": [], "secret": "s", "headers": None}}
    ),
}


@pytest.mark.parametrize("name", list(OLD_SHAPES))
def test_the_schemas_refuse_the_shapes_issue_12_found(name: str) -> None:
    body = OLD_SHAPES[name]
    assert problems(kind_of(200, body), body), f"{name} passed the schemas"
