"""Every GET the sandbox serves answers as the service's reference says (issue 28, item 1): a walk
over every GET operation (`support/get_walk.py`) of a seeded sandbox, whose webhooks received a few
journeys (some deliveries failed), each answer validated against the reference's schema for that
operation: the resources' schemas (tests/contract/schemas) in the kind of answer the operation
gives, holding only the types its `data` and `included` may hold (`OPERATIONS`, written from the
reference's response schemas). A request the service refuses (an unknown filter value, a missing
record) must be refused, with an `errors` body.

The figure, valid/total per operation, is printed (`pytest -s`) and named in a failure; every
operation must reach 95%. Where the reference contradicts itself, the schemas say so and take
the side its own examples and texts take.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from shipsync_sandbox import SandboxApp, SandboxOptions, create_app
from shipsync_sandbox.app import API_ROUTES
from shipsync_sandbox.event_kinds import EVENT_KINDS
from shipsync_sandbox.journeys import simulate
from support.contract_schemas import BASE, answer_validator, validator
from support.get_walk import Answer, walk
from support.sandboxes import K1

GOAL = 0.95


@dataclass(frozen=True)
class Shape:
    kind: str  # single, listing (paged) or collection (not paged)
    data: tuple[str, ...]
    included: tuple[str, ...] = ()


NOTIFICATION_RECORDS = ("webhook", "tracking_request", "transport_event", "estimated_event")
DOCUMENT_RECORDS = ("account", "user", "shipment", "container", "document", "email_submission", "document_representation")
# Per GET operation, what the reference's response schema lets its answer hold.
OPERATIONS: dict[str, Shape] = {
    "GET /shipping_lines": Shape("collection", ("shipping_line",)),
    "GET /parties": Shape("listing", ("party",)),
    "GET /metro_areas/{id}": Shape("single", ("metro_area",)),
    "GET /document_schemas/{id}": Shape("single", ("document_schema",)),
    "GET /documents": Shape("listing", ("document",), DOCUMENT_RECORDS),
    "GET /documents/{id}": Shape("single", ("document",), DOCUMENT_RECORDS),
    "GET /tracking_requests": Shape("listing", ("tracking_request",), ("account", "shipping_line", "shipment")),
    "GET /tracking_requests/{id}": Shape("single", ("tracking_request",), ("account", "shipment", "shipping_line")),
    "GET /tracking_requests/{tracking_request_id}/custom_fields": Shape("listing", ("custom_field",)),
    "GET /shipments": Shape("listing", ("shipment",), ("container", "port", "terminal")),
    "GET /shipments/{id}": Shape("single", ("shipment",), ("container", "port", "terminal")),
    "GET /shipments/{shipment_id}/custom_fields": Shape("listing", ("custom_field",)),
    # The reference contradicts itself: one container carries its terminals and transport events,
    # the listing only the containers' shipments. Each answer is held to its own schema.
    "GET /containers": Shape("listing", ("container",), ("shipment",)),
    "GET /containers/{id}": Shape("single", ("container",), ("shipment", "terminal", "transport_event")),
    "GET /containers/{id}/transport_events": Shape(
        "listing", ("transport_event",), ("shipment", "container", "port", "metro_area", "terminal", "rail_terminal", "vessel")
    ),
    "GET /containers/{container_id}/custom_fields": Shape("listing", ("custom_field",)),
    "GET /ports/{id}": Shape("single", ("port",)),
    "GET /terminals/{id}": Shape("single", ("terminal",)),
    "GET /vessels/{id}": Shape("single", ("vessel",)),
    "GET /custom_field_definitions": Shape("listing", ("custom_field_definition",)),
    "GET /custom_field_definitions/{id}": Shape("single", ("custom_field_definition",)),
    "GET /custom_field_definitions/{definition_id}/options": Shape("listing", ("custom_field_option",)),
    "GET /custom_field_definitions/{definition_id}/options/{option_id}": Shape("single", ("custom_field_option",)),
    "GET /custom_fields": Shape("listing", ("custom_field",)),
    "GET /custom_fields/{id}": Shape("single", ("custom_field",)),
    "GET /webhooks": Shape("listing", ("webhook",)),
    "GET /webhooks/{id}": Shape("single", ("webhook",)),
    "GET /webhooks/events": Shape("listing", ("webhook_event_category",)),
    # Again one notification carries a container_updated_event, the listing does not.
    "GET /webhook_notifications": Shape("listing", ("webhook_notification",), NOTIFICATION_RECORDS),
    "GET /webhook_notifications/{id}": Shape("single", ("webhook_notification",), (*NOTIFICATION_RECORDS, "container_updated_event")),
}


def _of_types(types: tuple[str, ...]) -> dict[str, Any]:
    return {"properties": {"type": {"enum": list(types)}}}


def schema_of(shape: Shape) -> dict[str, Any]:
    """The operation's answer: its kind's document, its `data` and `included` of the types it may hold."""
    data = _of_types(shape.data) if shape.kind == "single" else {"items": _of_types(shape.data)}
    return {
        "allOf": [
            {"$ref": f"{BASE}documents.json#/$defs/{shape.kind}"},
            {"properties": {"data": data, "included": {"items": _of_types(shape.included)}}},
        ]
    }


VALIDATORS = {name: validator(schema_of(shape)) for name, shape in OPERATIONS.items()}
ERRORS = answer_validator("errors")


def problems_of(answer: Answer) -> list[str]:
    """Why an answer is not the reference's (none when it is)."""
    if answer.refused:
        if answer.status < 400:
            return [f"answered {answer.status} to a request the service refuses"]
        validator = ERRORS
    elif answer.status != 200:
        return [f"answered {answer.status}"]
    else:
        validator = VALIDATORS[answer.operation]
    if answer.body is None:
        return ["no JSON body"]
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message[:200]}" for e in validator.iter_errors(answer.body)]


def figures(answers: list[Answer]) -> dict[str, tuple[int, int, list[str]]]:
    """Per operation: valid answers, answers, and the first problems found."""
    counted: dict[str, list[Any]] = defaultdict(lambda: [0, 0, []])
    for answer in answers:
        found = problems_of(answer)
        entry = counted[answer.operation]
        entry[0] += not found
        entry[1] += 1
        entry[2].extend(f"{answer.url}: {p}" for p in found[:2] if len(entry[2]) < 4)
    return {name: (valid, total, found) for name, (valid, total, found) in counted.items()}


def served_operations() -> set[str]:
    """Every GET the sandbox routes, as `GET /path/{}` (parameter names aside)."""
    return {re.sub(r"\{[^}]*\}", "{}", f"GET {route.path.removeprefix('/v2')}") for route in API_ROUTES if "GET" in (route.methods or ())}


def seeded_sandbox() -> SandboxApp:
    """Documents, values, a webhook for every kind, and six boxes' journeys delivered to it (one
    delivery in five refused until the sandbox gives up, so the notifications' log holds failures)."""
    app = create_app(SandboxOptions(api_keys=(K1,), documents=60, custom_field_values=60, rate_limit=None, delivery_retry_base_s=0.0))

    async def deliver() -> None:
        answered = [0]

        async def receiver(request: httpx.Request) -> httpx.Response:
            answered[0] += 1
            return httpx.Response(503 if json.loads(request.content)["data"]["id"][-1] in "05af" else 200)

        app.deliverer._client = httpx.AsyncClient(transport=httpx.MockTransport(receiver))
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://sandbox.test/v2") as client:  # type: ignore[arg-type]
            body = {"data": {"type": "webhook", "attributes": {"url": "https://hooks.test/w", "events": list(EVENT_KINDS), "active": True}}}
            created = await client.post("/webhooks", json=body, headers={"Authorization": f"Token {K1}"})
            assert created.status_code == 201, created.text
        simulate(app.state.world.accounts[K1], app.deliverer.emit, containers=6)
        while app.deliverer.pending:
            await asyncio.sleep(0.01)

    asyncio.run(deliver())
    return app


@pytest.fixture(scope="module")
def answers() -> list[Answer]:
    return walk(seeded_sandbox(), K1)


def test_the_walk_asks_every_get_the_sandbox_serves(answers: list[Answer]) -> None:
    walked = {re.sub(r"\{[^}]*\}", "{}", a.operation) for a in answers}
    assert served_operations() <= walked
    assert {a.operation for a in answers} <= set(OPERATIONS)


@pytest.mark.slow
def test_every_get_answers_as_the_reference_says(answers: list[Answer]) -> None:
    table = figures(answers)
    lines = [f"{valid:4d}/{total:<4d} {valid / total:6.1%}  {name}" for name, (valid, total, _) in sorted(table.items())]
    valid, total = sum(v for v, _, _ in table.values()), sum(t for _, t, _ in table.values())
    lines.append(f"{valid:4d}/{total:<4d} {valid / total:6.1%}  every GET ({len(table)} operations)")
    print("\n" + "\n".join(lines))
    short = {name: found for name, (v, t, found) in table.items() if v < GOAL * t}
    assert not short, "\n".join([*lines, *(f"{name}: {p}" for name, found in sorted(short.items()) for p in found)])
    assert total > 500
