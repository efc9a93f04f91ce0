"""The sandbox answers as the service's reference says, and the product asks as it says
(`tests/contract/reference/openapi.json`, read by `support/contract_schemas.py`).

One recording sandbox (`record_exchanges`) meets, in turn: the product itself (registering a
webhook, pulling everything, catching up notifications, every spreadsheet kind with its dry run,
apply and undo, and the client's other operations), requests for what the product will use next
(parties, a test delivery, re-activating a webhook, a tracking request naming a container and a
customer), the refusals the reference declares (a 422, the creates' 429), and a walk over every GET
the sandbox serves (`support/get_walk.py`). Then:

- every answer is one its operation declares (status, content type, body), at least 95% per
  operation: the figure, valid/total per operation, prints with `pytest -s` and names the problems
  of an operation under it;
- every request the product sent is one its operation takes (declared query parameters with values
  their schema takes, a body its `requestBody` takes, custom field values of their definition's
  type): all of them;
- every webhook delivery is a notification as the reference shapes it.
"""

from __future__ import annotations

import asyncio
import csv
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.responses import Response

import shipsync_demo
from shipsync.api import AsyncShipsyncClient
from shipsync.api.tracking_reads import CONTAINER_INCLUDES, TRANSPORT_EVENT_INCLUDES
from shipsync.bulk.apply import apply_file
from shipsync.bulk.undo import undo_run
from shipsync.config import Settings
from shipsync.errors import ApiError
from shipsync.pull.everything import pull_all
from shipsync.webhooks.catch_up import catch_up
from shipsync.webhooks.event_kinds import EVENT_KINDS
from shipsync.webhooks.registration import register_webhook
from shipsync_sandbox.admin_client import wait_for_deliveries
from shipsync_sandbox.exchange_log import Exchange
from shipsync_sandbox.limits import RateLimit
from shipsync_sandbox.serving import BackgroundServer
from shipsync_sandbox.views import stopped_since
from shipsync_sandbox.world import Account
from support.contract_checks import (
    Definitions,
    answer_problems,
    delivery_problems,
    figures,
    request_problems,
    short_of,
    table,
    value_type_problems,
)
from support.get_walk import walk
from support.sandboxes import K1, RunningSandbox, SandboxFactory, settings_for

# Every operation the product uses (src/shipsync/api), and those the next work on it will.
PRODUCT_OPERATIONS = {
    "GET /documents",
    "GET /documents/{id}",
    "GET /metro_areas/{id}",
    "GET /document_schemas/{id}",
    "GET /tracking_requests",
    "GET /tracking_requests/{id}",
    "POST /tracking_requests",
    "POST /tracking_requests/infer_number",
    "PATCH /tracking_requests/{id}",
    "GET /shipments",
    "GET /shipments/{id}",
    "PATCH /shipments/{id}",
    "PATCH /shipments/{id}/stop_tracking",
    "PATCH /shipments/{id}/resume_tracking",
    "GET /containers",
    "GET /containers/{id}",
    "GET /containers/{id}/transport_events",
    "GET /ports/{id}",
    "GET /terminals/{id}",
    "GET /vessels/{id}",
    "GET /shipping_lines",
    "GET /custom_field_definitions",
    "POST /custom_field_definitions",
    "GET /custom_field_definitions/{id}",
    "PATCH /custom_field_definitions/{id}",
    "DELETE /custom_field_definitions/{id}",
    "GET /custom_field_definitions/{definition_id}/options",
    "POST /custom_field_definitions/{definition_id}/options",
    "PATCH /custom_field_definitions/{definition_id}/options/{option_id}",
    "DELETE /custom_field_definitions/{definition_id}/options/{option_id}",
    "GET /custom_fields",
    "POST /custom_fields",
    "PATCH /custom_fields/{id}",
    "DELETE /custom_fields/{id}",
    "GET /shipments/{shipment_id}/custom_fields",
    "POST /shipments/{shipment_id}/custom_fields",
    "PATCH /shipments/{shipment_id}/custom_fields/{api_slug}",
    "DELETE /shipments/{shipment_id}/custom_fields/{api_slug}",
    "GET /containers/{container_id}/custom_fields",
    "GET /tracking_requests/{tracking_request_id}/custom_fields",
    "POST /tracking_requests/{tracking_request_id}/custom_fields",
    "PATCH /tracking_requests/{tracking_request_id}/custom_fields/{api_slug}",
    "GET /webhooks",
    "POST /webhooks",
    "GET /webhooks/{id}",
    "PATCH /webhooks/{id}",
    "DELETE /webhooks/{id}",
    "GET /webhooks/events",
    "GET /webhook_notifications",
}
NEXT_OPERATIONS = {"POST /webhooks/trigger", "GET /webhooks/ips", "GET /containers/{id}/raw_events", "GET /parties", "POST /parties"}
HOOKS = "https://hooks.example.test/w"
DATA = Path(shipsync_demo.__file__).parent / "data"  # the demo's spreadsheets, keyed to the seeded world


@dataclass
class Contract:
    """What the sandbox recorded, in parts."""

    product: list[Exchange] = field(default_factory=list)  # the product's own requests
    others: list[Exchange] = field(default_factory=list)  # the test's: next operations, refusals, the walk
    refused: list[Exchange] = field(default_factory=list)  # asks the service refuses
    deliveries: list[Any] = field(default_factory=list)

    @property
    def every(self) -> list[Exchange]:
        return [*self.product, *self.others]


def write_csv(path: Path, table: list[list[str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as out:
        csv.writer(out).writerows(table)
    return path


def _taken(sandbox: RunningSandbox) -> list[Exchange]:
    """The exchanges recorded since the last call."""
    log = sandbox.app.exchanges
    assert log is not None
    taken = list(log.exchanges)
    log.clear()
    return taken


def _sailed(account: Account, container_id: str) -> bool:
    """Whether a container has left on a vessel by now (its events name one)."""
    plan = account.plans[account.shipment_of[container_id]]
    departed = plan.containers[container_id].at("container.transport.vessel_departed")
    return departed is not None and departed < account.as_of(container_id)


async def _client_operations(client: AsyncShipsyncClient, sandbox: RunningSandbox) -> None:
    """The client's operations no spreadsheet or pull makes, and the refusals it meets."""
    account = sandbox.state.world.accounts[K1]
    document_id = next(iter(account.documents))
    tracked = next(t for t in account.tracking_requests.values() if t["relationships"]["tracked_object"]["data"])
    shipment_id = tracked["relationships"]["tracked_object"]["data"]["id"]
    container_id = next(c["id"] for c in account.of_type("container") if _sailed(account, c["id"]))
    webhook = await client.webhooks.create(HOOKS + "/second", ["container.created", "tracking_request.succeeded"])
    await client.webhooks.update(webhook.id, {"headers": [{"name": "X-Team", "value": "ops"}]})
    await client.webhooks.get(webhook.id)
    await client.webhooks.delete(webhook.id)
    await client.documents.get_page(document_id, include=["current_extraction"])
    await client.metro_areas.get("USLAX")
    await client.document_schemas.get("commercial_invoice@2026-03-23")
    await client.tracking_requests.infer_number("MAEU123456789")
    await client.tracking_requests.update(tracked["id"], ref_number="REQ-CONTRACT")
    await client.shipments.update(shipment_id, tags=["contract", "checked"], ref_numbers=["PO-1"])
    await client.places.port_page("USLAX")
    box = await client.containers.get_page(container_id, include=CONTAINER_INCLUDES)
    for type_, id_ in {(r["type"], r["id"]) for r in box.included if r["type"] == "terminal"}:
        await client.places.page_of(type_, id_)
    events = await client.containers.transport_events(container_id, include=TRANSPORT_EVENT_INCLUDES)
    for vessel in {r["id"] for r in events.included if r["type"] == "vessel"}:
        await client.places.vessel_page(vessel)
    await client.tracking_requests.get(tracked["id"])
    await client.webhooks.list_raw()
    definitions = client.custom_field_definitions
    made = await definitions.create(entity_type="Container", api_slug="contract_broker", display_name="Broker", data_type="enum")
    await definitions.update(made.id, {"display_name": "Customs broker", "validation": {"required": False}})
    await definitions.get(made.id)
    option = await definitions.create_option(made.id, label="Acme", value="acme", position=0)
    await definitions.update_option(made.id, option.id, label="Acme Corp", position=1)
    await definitions.options(made.id)
    fields = client.custom_fields
    value = await fields.create(entity_type="container", entity_id=container_id, api_slug="contract_broker", value="acme")
    await fields.update(value.id, "acme")
    await fields.set_on_entity("tracking_request", tracked["id"], "request_owner", "Ana")
    await fields.update_on_entity("tracking_request", tracked["id"], "request_owner", "Ben")
    await fields.of_entity("tracking_request", tracked["id"])
    await fields.of_entity("container", container_id)
    await fields.of_entity("shipment", shipment_id)
    await fields.set_on_entity("shipment", shipment_id, "shipment_priority", "standard")
    await fields.update_on_entity("shipment", shipment_id, "shipment_priority", "expedited")
    await fields.delete_on_entity("shipment", shipment_id, "shipment_priority")
    await fields.delete(value.id)
    await definitions.delete_option(made.id, option.id)
    await definitions.delete(made.id)


async def _client_refusals(client: AsyncShipsyncClient, sandbox: RunningSandbox) -> None:
    """Requests the service refuses, through the client: each an `ApiError`."""
    account = sandbox.state.world.accounts[K1]
    container_id = account.of_type("container")[0]["id"]
    fields, definitions = client.custom_fields, client.custom_field_definitions
    for failing in (
        client.document_schemas.get("commercial_invoice@1999-01-01"),
        client.documents.get("no-such-document"),
        client.metro_areas.get("ZZZZZ"),
        fields.create(entity_type="container", entity_id=container_id, api_slug="priority", value="rush"),
        definitions.create(entity_type="Boat", api_slug="nope", display_name="N", data_type="short_text"),
        client.tracking_requests.infer_number("?"),
        client.containers.get_page("no-such-container"),
    ):
        with pytest.raises(ApiError):
            await failing


def _bulk(settings: Settings, folder: Path, sandbox: RunningSandbox) -> None:
    """Every spreadsheet kind, on the account's own records: definitions (a boolean, a date-time
    and a number among them), values (date-times written without a zone among them), their undo,
    tracking edits, stop and resume, and starting to track."""
    account = sandbox.state.world.accounts[K1]
    boxes = [c["attributes"]["number"] for c in account.of_type("container")[:6]]
    tracked = [
        t["attributes"]["request_number"] for t in account.tracking_requests.values() if t["relationships"]["tracked_object"]["data"]
    ]
    apply_file(settings, "custom-field-definitions", DATA / "custom-field-definitions.csv")
    typed = [
        ["entity_type", "api_slug", "display_name", "data_type", "default_value"],
        ["Container", "contract_inspected", "Inspected", "boolean", "false"],
        ["Container", "contract_gate_at", "Gate appointment", "datetime", "2026-05-11 18:30"],
        ["Shipment", "contract_pallets", "Pallets", "number", "12"],
    ]
    apply_file(settings, "custom-field-definitions", write_csv(folder / "typed-definitions.csv", typed))
    header = ["Container Number", "po_number", "priority", "hazardous", "handling_flags", "declared_value"]
    header += ["customs_cleared_on", "delivery_appointment_at", "customs_broker_code", "contract_inspected", "contract_gate_at"]
    values = [header]
    for n, box in enumerate(boxes):
        values.append([box, f"PO-{n:04d}", ("low", "High", "urgent")[n % 3], ("yes", "no")[n % 2], "fragile; hazmat", f"{1000 + n},50"])
        values[-1] += ["03/15/2026", f"2026-05-1{n} 18:30", "acme", "yes", "2026-05-12T07:00"]
    file = write_csv(folder / "values.csv", values)
    apply_file(settings, "custom-fields", file, dry_run=True)
    tagged = apply_file(settings, "custom-fields", file)
    undo_run(settings, tagged.run_id)
    edits = [
        ["request_number", "tags_add", "ref_numbers"],
        *([number, "contract; checked", f"PO-{n}"] for n, number in enumerate(tracked[:3])),
    ]
    apply_file(settings, "tracking-requests", write_csv(folder / "edits.csv", edits))
    tracking = next(s["id"] for s in account.of_type("shipment") if stopped_since(account, s) is None)
    apply_file(settings, "stop-tracking", write_csv(folder / "stop.csv", [["shipment_id"], [tracking]]))
    apply_file(settings, "resume-tracking", write_csv(folder / "resume.csv", [["shipment_id"], [tracking]]))
    start = [
        ["request_type", "request_number", "scac", "ref_numbers", "shipment_tags", "shipment.consignee", "container.priority"],
        ["bill_of_lading", "MAEU987654321", "MAEU", "PO-77", "contract", "Globex", "high"],
        ["bill_of_lading", "HLCU123456789", "", "", "", "", ""],
    ]
    apply_file(settings, "new-tracking", write_csv(folder / "start.csv", start))


def _receiver() -> Any:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        await Response(status_code=200)(scope, receive, send)

    return app


def _next_operations(sandbox: RunningSandbox, hooks_url: str) -> None:
    """What the product will use next, and the refusals the reference declares for it."""
    account = sandbox.state.world.accounts[K1]
    party = next(iter(account.parties))
    webhook = next(iter(account.webhooks))
    with httpx.Client(base_url=sandbox.api_url, headers={"Authorization": f"Token {K1}"}, timeout=30) as http:
        created = http.post("/parties", json={"data": {"type": "party", "attributes": {"company_name": "Contract Co"}}})
        assert created.status_code == 201, created.text
        assert http.post("/parties", json={"data": {"type": "party", "attributes": {}}}).status_code == 422
        delivered = http.post(
            "/webhooks/trigger", json={"url": f"{hooks_url}/hook", "event": "container.transport.vessel_arrived", "secret": "s3"}
        )
        assert delivered.status_code == 200 and delivered.json()["succeeded"], delivered.text
        assert http.post("/webhooks/trigger", json={"url": "http://hooks.example.test/x", "event": "container.created"}).status_code == 422
        off = {"data": {"type": "webhook", "attributes": {"active": False}}}
        assert http.patch(f"/webhooks/{webhook}", json=off).json()["data"]["attributes"]["active"] is False
        on = {"data": {"type": "webhook", "attributes": {"active": True}}}
        assert http.patch(f"/webhooks/{webhook}", json=on).json()["data"]["attributes"]["active"] is True
        box = account.of_type("container")[0]["attributes"]["number"]
        staged = {
            "request_type": "bill_of_lading",
            "request_number": "CMDU554433221",
            "scac": "CMDU",
            "initial_custom_fields": {
                "containers": [{"api_slug": "po_number", "value": "PO-9", "number": box}, {"api_slug": "priority", "value": "low"}]
            },
        }
        body = {
            "data": {
                "type": "tracking_request",
                "attributes": staged,
                "relationships": {"customer": {"data": {"type": "party", "id": party}}},
            }
        }
        assert http.post("/tracking_requests", json=body).status_code == 201
        wrong = {"data": {"type": "tracking_request", "attributes": {"request_type": "parcel", "request_number": "X"}}}
        assert http.post("/tracking_requests", json=wrong).status_code == 422


def _creates_limited(make_sandbox: SandboxFactory) -> list[Exchange]:
    """The reference limits creating tracking requests: past the limit, a 429."""
    limited = make_sandbox(api_keys=(K1,), documents=1, record_exchanges=True, create_limit=RateLimit(1, 60))
    body = {
        "data": {
            "type": "tracking_request",
            "attributes": {"request_type": "bill_of_lading", "request_number": "MAEU111222333", "scac": "MAEU"},
        }
    }
    with httpx.Client(base_url=limited.api_url, headers={"Authorization": f"Token {K1}"}, timeout=30) as http:
        statuses = [http.post("/tracking_requests", json=body).status_code for _ in range(2)]
    assert statuses[1] == 429
    return _taken(limited)


@pytest.fixture(scope="module")
def contract(make_module_sandbox: SandboxFactory, module_env: Path) -> Iterator[Contract]:
    sandbox = make_module_sandbox(
        api_keys=(K1,), documents=60, custom_field_values=60, record_exchanges=True, tracking_delay_s=0.2, delivery_retry_base_s=0.0
    )
    found = Contract()

    async def collect(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        found.deliveries.append(body)
        return httpx.Response(503 if body["data"]["id"][-1] in "05af" else 200)  # some deliveries fail for good

    sandbox.app.deliverer._client = httpx.AsyncClient(transport=httpx.MockTransport(collect))
    settings = settings_for(sandbox, module_env / "warehouse")
    folder = module_env / "files"
    folder.mkdir()

    register_webhook(settings, HOOKS, [], all_events=True)
    found.product += _taken(sandbox)
    httpx.post(
        f"{sandbox.server.url}/_admin/simulate?containers=8", headers={"Authorization": f"Token {K1}"}, timeout=60
    ).raise_for_status()
    wait_for_deliveries(sandbox.server.url, K1)
    pull_all(settings)
    catch_up(settings)
    _bulk(settings, folder, sandbox)

    async def operations() -> None:
        async with sandbox.client() as client:
            await _client_operations(client, sandbox)
            found.product.extend(_taken(sandbox))
            await _client_refusals(client, sandbox)

    asyncio.run(operations())
    found.others += _taken(sandbox)
    with BackgroundServer(_receiver()) as hooks:
        _next_operations(sandbox, hooks.url)
    found.others += _taken(sandbox)
    wait_for_deliveries(sandbox.server.url, K1)
    walked = walk(sandbox.app, K1)
    found.others += walked.exchanges
    found.refused += walked.refused
    yield found


@pytest.fixture(scope="module")
def limited(make_module_sandbox: SandboxFactory) -> list[Exchange]:
    return _creates_limited(make_module_sandbox)


@pytest.mark.slow
def test_every_answer_is_one_the_reference_declares(contract: Contract, limited: list[Exchange]) -> None:
    answers = [*contract.every, *limited]
    found = figures(answers, answer_problems)
    lines = table(found, "every answer")
    print("\n" + "\n".join(lines))
    assert not short_of(found), "\n".join([*lines, *short_of(found)])
    assert {*PRODUCT_OPERATIONS, *NEXT_OPERATIONS} <= set(found), sorted({*PRODUCT_OPERATIONS, *NEXT_OPERATIONS} - set(found))
    statuses = {e.status for e in answers}
    assert {200, 201, 204, 400, 401, 404, 422, 429} <= statuses
    # Enough answers to speak for the whole: pulls now read only the events of changed containers.
    assert sum(f.total for f in found.values()) > 500


@pytest.mark.slow
def test_what_the_service_refuses_is_refused(contract: Contract) -> None:
    assert len(contract.refused) > 15
    assert [f"{e.method} {e.path} {e.status}" for e in contract.refused if e.status < 400] == []


@pytest.mark.slow
def test_every_request_the_product_sends_is_one_the_reference_takes(contract: Contract) -> None:
    definitions = Definitions()
    definitions.learn(contract.every)
    found = figures(contract.product, lambda e: [*request_problems(e), *value_type_problems(e, definitions)])
    lines = table(found, "the product's requests")
    print("\n" + "\n".join(lines))
    assert not short_of(found, goal=1.0), "\n".join(short_of(found, goal=1.0))
    assert set(found) >= PRODUCT_OPERATIONS, sorted(PRODUCT_OPERATIONS - set(found))


@pytest.mark.slow
def test_every_delivery_is_a_notification_the_reference_shapes(contract: Contract) -> None:
    kinds = {d["data"]["attributes"]["event"] for d in contract.deliveries}
    assert len(contract.deliveries) > 100 and {"tracking_request.succeeded", "container.transport.delivered", "container.updated"} <= kinds
    problems = [f"{d['data']['attributes']['event']}: {p}" for d in contract.deliveries for p in delivery_problems(d)]
    assert not problems, "\n".join(problems[:40])
    assert set(EVENT_KINDS) >= kinds
