"""Whatever shape the service's answers take, no read fails and no write's outcome is lost.

A property (issue 12): any member of any answer may be null, absent, an enum value never seen
before, or come with members never seen before. The answers are the sandbox's own, rewritten at
random on their way to the real client (an httpx transport over the sandbox's ASGI app); only what
makes a resource a resource (`data`, each resource's `id` and `type`) is kept. Reads must return;
writes must return, and what they wrote must be at the service, with the id the client reports;
bulk writes must be `applied`; a registered webhook's secret must reach the secrets store whenever
any answer carried it.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shipsync.api import AsyncShipsyncClient
from shipsync.api.tracking_reads import CONTAINER_INCLUDES, SHIPMENT_INCLUDES, TRANSPORT_EVENT_INCLUDES
from shipsync.api.webhooks import secret_of
from shipsync.bulk.custom_fields import CustomFieldValues
from shipsync.bulk.definitions import DefinitionEdits
from shipsync.bulk.execute import execute
from shipsync.bulk.model import Change
from shipsync.bulk.tracking_edits import TrackingRequestEdits
from shipsync.config import load_settings
from shipsync.errors import InputError
from shipsync.webhooks.registration import register_webhook
from shipsync.webhooks.secrets_store import store_path
from shipsync_sandbox import SandboxApp, SandboxOptions, create_app
from support.hypothesis_profile import suppressing
from support.mutations import MUTATIONS, Mutator
from support.sandbox_transport import IN_PROCESS_URL, SandboxTransport
from support.sandboxes import K1

RUNS = itertools.count()


def _fresh() -> SandboxApp:
    return create_app(SandboxOptions(api_keys=(K1,), documents=4, rate_limit=None))


async def _reads(client: AsyncShipsyncClient, app: SandboxApp) -> None:
    account = app.state.world.accounts[K1]
    document_id = next(iter(account.documents))
    tr_id = next(iter(account.tracking_requests))
    shipment_id = account.of_type("shipment")[0]["id"]
    [p async for p in client.documents.list_pages(page_size=2, max_pages=2)]
    await client.documents.get(document_id)
    await client.metro_areas.get("USLAX")
    await client.document_schemas.get("commercial_invoice@2026-03-23")
    await client.tracking_requests.list(page_size=3, max_pages=2)
    await client.tracking_requests.get(tr_id)
    await client.shipments.get(shipment_id)
    [p async for p in client.shipments.list_pages(include=",".join(SHIPMENT_INCLUDES), max_pages=1)]
    container_id = account.of_type("container")[0]["id"]
    [p async for p in client.containers.list_pages(include=CONTAINER_INCLUDES, page_size=3, max_pages=2)]
    await client.containers.get_page(container_id, include=CONTAINER_INCLUDES)
    await client.containers.transport_events(container_id, include=TRANSPORT_EVENT_INCLUDES)
    world = app.state.world
    await client.places.port_page("USLAX")
    await client.places.terminal_page(next(iter(world.places.terminals)))
    await client.places.vessel_page(next(iter(world.places.vessels)))
    await client.shipping_lines.list_page()
    for definition in await client.custom_field_definitions.list():
        await client.custom_field_definitions.options(definition.id)
    await client.custom_fields.list()
    await client.custom_fields.of_entity("tracking_request", tr_id)
    await client.webhooks.list_raw()
    await client.webhooks.event_kinds()


async def _writes(client: AsyncShipsyncClient, app: SandboxApp, n: int) -> None:
    account = app.state.world.accounts[K1]
    tr_id = next(iter(account.tracking_requests))
    shipment_id = account.of_type("shipment")[0]["id"]
    container_id = account.of_type("container")[0]["id"]
    definitions, fields = client.custom_field_definitions, client.custom_fields
    made = await definitions.create(entity_type="Container", api_slug=f"kind_{n}", display_name="Kind", data_type="enum")
    assert account.definitions[made.id]["attributes"]["api_slug"] == f"kind_{n}"
    await definitions.update(made.id, {"display_name": "Kind of goods"})
    assert account.definitions[made.id]["attributes"]["display_name"] == "Kind of goods"
    option = await definitions.create_option(made.id, label="Bulk", value="bulk")
    assert [o["id"] for o in account.options[made.id]] == [option.id]
    await definitions.update_option(made.id, option.id, label="Bulk goods")
    assert account.options[made.id][0]["attributes"]["label"] == "Bulk goods"
    value = await fields.create(entity_type="container", entity_id=container_id, api_slug=f"kind_{n}", value="bulk")
    assert account.custom_fields[value.id]["attributes"]["value"] == "bulk"
    owner = await fields.set_on_entity("tracking_request", tr_id, "request_owner", f"owner {n}")
    assert account.custom_fields[owner.id]["attributes"]["value"] == f"owner {n}"
    await fields.update(owner.id, f"owner {n}+")
    assert account.custom_fields[owner.id]["attributes"]["value"] == f"owner {n}+"
    await fields.delete(owner.id)
    assert owner.id not in account.custom_fields
    await client.shipments.update(shipment_id, tags=[f"t{n}"])
    assert account.resource("shipment", shipment_id)["attributes"]["tags"] == [f"t{n}"]  # type: ignore[index]
    await client.tracking_requests.update(tr_id, ref_number=f"R{n}")
    tracked = account.tracking_requests[tr_id]["relationships"]["tracked_object"]["data"]["id"]
    assert f"R{n}" in account.resource("shipment", tracked)["attributes"]["ref_numbers"]  # type: ignore[index]
    raw = await client.webhooks.create_raw("https://hooks.example.test/w", ["container.created"])
    stored = account.webhooks[str(raw["id"])]["attributes"]["secret"]
    assert secret_of(raw) in (stored, None)


# (seed of the rewrite, share of members rewritten, which rewrites): a seed, not `st.randoms`, since
# one example rewrites thousands of members.
answers = st.tuples(st.integers(0, 2**32 - 1), st.floats(0.05, 0.6), st.lists(st.sampled_from(MUTATIONS), min_size=1, unique=True))


@pytest.mark.slow
@settings(max_examples=40)
@given(answers=answers)
def test_no_read_fails_and_no_write_is_lost_through_the_client(answers: tuple[int, float, list[str]]) -> None:
    seed, rate, kinds = answers
    app = _fresh()
    transport = SandboxTransport(app, Mutator(random.Random(seed), rate, tuple(kinds)))

    async def run() -> None:
        async with AsyncShipsyncClient(IN_PROCESS_URL, K1, rate_limit=None, http_transport=transport) as client:
            await _reads(client, app)
            await _writes(client, app, 1)

    asyncio.run(run())


@pytest.mark.slow
@settings(max_examples=25, suppress_health_check=suppressing(HealthCheck.function_scoped_fixture))
@given(answers=answers)
def test_bulk_writes_and_registrations_keep_their_outcome(answers: tuple[int, float, list[str]], tmp_path: Path) -> None:
    seed, rate, kinds = answers
    app = _fresh()
    account = app.state.world.accounts[K1]
    transport = SandboxTransport(app, Mutator(random.Random(seed), rate, tuple(kinds)))
    warehouse = tmp_path / f"w{next(RUNS)}"
    settings_ = load_settings(api_url=IN_PROCESS_URL, api_key=K1, warehouse=warehouse, rate_limit="0", retry_base_delay=0.01)
    tr_id = next(iter(account.tracking_requests))
    shipment_id = account.of_type("shipment")[0]["id"]
    container_id = account.of_type("container")[0]["id"]
    new_definition = {"entity_type": "Container", "api_slug": "grade", "display_name": "Grade", "data_type": "enum"}
    changes = [
        Change(
            2,
            "custom_field_definition",
            "grade",
            "definition",
            "create",
            None,
            new_definition,
            payload={"options": [{"label": "A", "value": "a", "position": 0}]},
        ),
        Change(3, "container", container_id, "priority", "create", None, "high", payload={"definition_id": "x"}),
        Change(4, "shipment", shipment_id, "tags", "update", [], ["hot"], shipment_id),
        Change(5, "tracking_request", tr_id, "ref_number", "update", None, "R-9", tr_id),
    ]
    for kind, of_kind in ((DefinitionEdits(), changes[:1]), (CustomFieldValues(), changes[1:2]), (TrackingRequestEdits(), changes[2:])):
        execute(settings_, kind, of_kind, http_transport=transport)
    assert [c.status for c in changes] == ["applied"] * 4, [c.detail for c in changes]
    assert changes[0].resource_id in account.definitions and changes[1].resource_id in account.custom_fields
    assert [o["attributes"]["value"] for o in account.options[changes[0].resource_id or ""]] == ["a"]
    try:
        webhook = register_webhook(settings_, "https://hooks.example.test/w", ["container.created"], http_transport=transport)
    except InputError:
        # The account's event listing came back without that kind: refused before anything was sent.
        assert not [e for e in transport.exchanges if e.method == "POST" and e.path.endswith("/webhooks")]
        return
    secret = account.webhooks[webhook.id]["attributes"]["secret"]
    carried = any(secret in json.dumps(e.body) for e in transport.exchanges if "/webhooks" in e.path)
    saved = json.loads(store_path(settings_).read_text()) if store_path(settings_).exists() else {}
    assert saved.get(webhook.id) == secret or not carried
