"""The client's reads of shipments, containers, transport events, places and shipping lines, over
HTTP to a sandbox on a loopback port (docs/tracking-model.md: Read operations)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from shipsync.api.jsonapi import Page
from shipsync.api.tracking_models import Shipment
from shipsync.api.tracking_reads import CONTAINER_INCLUDES, SHIPMENT_INCLUDES, TRANSPORT_EVENT_INCLUDES
from shipsync.errors import NotFoundError
from shipsync.warehouse.members import members_of
from support.sandboxes import RunningSandbox


def run(sandbox: RunningSandbox, operation: Any) -> Any:
    async def go() -> Any:
        async with sandbox.client() as client:
            return await operation(client)

    return asyncio.run(go())


def test_containers_are_listed_page_by_page_most_recently_refreshed_first(sandbox: RunningSandbox) -> None:
    account = next(iter(sandbox.state.world.accounts.values()))

    async def read(client: Any) -> list[Page]:
        return [p async for p in client.containers.list_pages(include=CONTAINER_INCLUDES, page_size=7)]

    pages = run(sandbox, read)
    ids = [r["id"] for p in pages for r in p.data]
    assert sorted(ids) == sorted(c["id"] for c in account.of_type("container"))
    assert pages[0].meta == {"size": 7, "total": len(ids)}
    refreshed = [r["attributes"]["shipment_last_tracking_request_at"] for p in pages for r in p.data]
    assert refreshed == sorted(refreshed, reverse=True)
    for page in pages:
        # The reference's listing carries the containers' shipments only (one container, read by
        # id, carries its terminals and transport events too).
        assert {r["type"] for r in page.included} == {"shipment"}
        included = {(r["type"], r["id"]) for r in page.included}
        assert all(("shipment", c["relationships"]["shipment"]["data"]["id"]) in included for c in page.data)


def test_a_containers_transport_events_are_its_past_milestones_with_their_places(sandbox: RunningSandbox) -> None:
    account = next(iter(sandbox.state.world.accounts.values()))
    container = next(c for c in account.of_type("container") if account.plans[account.shipment_of[c["id"]]].ata < account.clock)

    async def read(client: Any) -> tuple[Page, Page]:
        one = await client.containers.get_page(container["id"], include=["transport_events"])
        return one, await client.containers.transport_events(container["id"], include=TRANSPORT_EVENT_INCLUDES)

    one, events = run(sandbox, read)
    assert [e["id"] for e in events.data] == [r["id"] for r in one.data[0]["relationships"]["transport_events"]["data"]]
    assert {e["id"] for e in events.data} == {r["id"] for r in one.included}
    times = [e["attributes"]["timestamp"] for e in events.data]
    assert times == sorted(times) and times[-1] <= account.clock.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert "container.transport.vessel_arrived" in {e["attributes"]["event"] for e in events.data}
    included = {(r["type"], r["id"]) for r in events.included}
    for event in events.data:
        assert event["relationships"]["container"]["data"]["id"] == container["id"]
        for name in TRANSPORT_EVENT_INCLUDES:
            ref = event["relationships"][name]["data"]
            assert ref is None or (ref["type"], ref["id"]) in included


def test_shipments_include_their_places_and_containers(sandbox: RunningSandbox) -> None:
    async def read(client: Any) -> Page:
        return await anext(client.shipments.list_pages(include=",".join(SHIPMENT_INCLUDES), page_size=5, max_pages=1))

    page = run(sandbox, read)
    included = {(r["type"], r["id"]) for r in page.included}
    for shipment in page.data:
        # Every attribute the declaration names (the reference's 32 and the real service's first estimates).
        assert set(shipment["attributes"]) == {m.name for m in members_of(Shipment) if m.kind not in ("ref", "refs")}
        for name in SHIPMENT_INCLUDES:
            data = shipment["relationships"][name]["data"]
            for ref in data if isinstance(data, list) else [data] if data else []:
                assert (ref["type"], ref["id"]) in included, name


def test_places_by_id_or_locode_and_every_shipping_line_in_one_answer(sandbox: RunningSandbox) -> None:
    world = sandbox.state.world
    terminal_id = next(iter(world.places.terminals))
    vessel_id = next(iter(world.places.vessels))

    async def read(client: Any) -> list[Page]:
        return [
            await client.places.port_page("USLAX"),
            await client.places.page_of("port", world.places.ports_by_code["USLAX"]["id"]),
            await client.places.page_of("terminal", terminal_id),
            await client.places.vessel_page(vessel_id),
            await client.shipping_lines.list_page(),
        ]

    by_code, by_id, terminal, vessel, lines = run(sandbox, read)
    assert by_code.data == by_id.data and by_code.data[0]["attributes"]["code"] == "USLAX"
    assert terminal.data[0]["id"] == terminal_id and vessel.data[0]["attributes"]["imo"]
    scacs = [r["attributes"]["scac"] for r in lines.data]
    assert len(scacs) == len(world.shipping_lines) == len(set(scacs)) and lines.meta == {}


@pytest.mark.parametrize(
    ("operation", "detail"),
    [
        (lambda c: c.containers.get_page("nope"), "Couldn't find Container"),
        (lambda c: c.containers.transport_events("nope"), "Couldn't find Container"),
        (lambda c: c.places.port_page("ZZZZZ"), "Couldn't find Port"),
        (lambda c: c.places.terminal_page("nope"), "Couldn't find Terminal"),
        (lambda c: c.places.vessel_page("nope"), "Couldn't find Vessel"),
    ],
)
def test_a_missing_record_is_a_404_naming_it(sandbox: RunningSandbox, operation: Any, detail: str) -> None:
    with pytest.raises(NotFoundError) as caught:
        run(sandbox, operation)
    assert detail in str(caught.value.errors[0].detail)
