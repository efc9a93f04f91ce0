"""Large seeded accounts (issue 14's benchmarks): the sizes asked for, documents made only when
read yet served in the same order, indexed custom field values, and `/_admin/advance`, which
changes exactly the number of records it is asked to."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import httpx
import pytest

from shipsync_sandbox import SandboxApp, SandboxOptions, create_app
from shipsync_sandbox.advance import Changes, advance
from shipsync_sandbox.views import container_view
from support.sandboxes import K1

AUTH = {"Authorization": f"Token {K1}"}


@pytest.fixture
def app() -> SandboxApp:
    return create_app(SandboxOptions(api_keys=(K1,), documents=500, shipments=40, containers=100, custom_field_values=450, rate_limit=None))


async def _call(app: SandboxApp, requests: list[tuple[str, str]]) -> list[Any]:
    transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
    async with httpx.AsyncClient(transport=transport, base_url="http://sandbox.test", headers=AUTH) as client:
        return [(await client.request(method, path)).raise_for_status().json() for method, path in requests]


def call(app: SandboxApp, *requests: tuple[str, str]) -> list[Any]:
    return asyncio.run(_call(app, list(requests)))


def every_page(app: SandboxApp, path: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    number = 1
    while True:
        (body,) = call(app, ("GET", f"{path}{'&' if '?' in path else '?'}page[size]=100&page[number]={number}"))
        items += body["data"]
        if "next" not in body["links"]:
            return items
        number += 1


def test_an_account_holds_the_numbers_asked_for(app: SandboxApp) -> None:
    totals = call(app, *(("GET", f"/v2/{kind}?page[size]=1") for kind in ("documents", "shipments", "containers", "custom_fields")))
    assert [body["meta"]["total"] for body in totals] == [500, 40, 100, 450]
    account = app.state.world.accounts[K1]
    assert sorted(len(s["relationships"]["containers"]["data"]) for s in account.of_type("shipment")) == [2] * 20 + [3] * 20


def test_documents_made_when_read_come_in_the_order_a_full_sort_gives(app: SandboxApp) -> None:
    lazy = every_page(app, "/v2/documents?sort=-created_at")
    everything = "commercial_invoice,packing_list,bill_of_lading,arrival_notice"
    sorted_whole = every_page(app, f"/v2/documents?sort=-created_at&filter[document_types]={everything}")
    assert [d["id"] for d in lazy] == [d["id"] for d in sorted_whole]
    created = [d["attributes"]["created_at"] for d in lazy]
    assert created == sorted(created, reverse=True) and len(set(created)) == len(created)


def test_values_are_found_by_entity_and_definition_and_stay_one_per_field(app: SandboxApp) -> None:
    account = app.state.world.accounts[K1]
    values = list(account.custom_fields.values())
    value = values[7]
    entity = value["relationships"]["entity"]["data"]
    definition_id = value["relationships"]["definition"]["data"]["id"]
    newest_first = values[::-1]  # the listings' order (the reference states none)
    (on_entity,) = call(app, ("GET", f"/v2/{entity['type']}s/{entity['id']}/custom_fields"))
    assert [v["id"] for v in on_entity["data"]] == [v["id"] for v in newest_first if v["relationships"]["entity"]["data"] == entity]
    by_definition = every_page(app, f"/v2/custom_fields?filter[definition_id]={definition_id}")
    by_id = [v["id"] for v in newest_first if v["relationships"]["definition"]["data"]["id"] == definition_id]
    assert [v["id"] for v in by_definition] == by_id
    body = {
        "data": {"type": "custom_field", "attributes": {"api_slug": value["attributes"]["api_slug"], "value": value["attributes"]["value"]}}
    }

    async def second() -> int:
        transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
        async with httpx.AsyncClient(transport=transport, base_url="http://sandbox.test", headers=AUTH) as client:
            return (await client.post(f"/v2/{entity['type']}s/{entity['id']}/custom_fields", json=body)).status_code

    assert asyncio.run(second()) == 422


def test_advance_changes_exactly_what_it_is_asked_to(app: SandboxApp) -> None:
    account = app.state.world.accounts[K1]
    before_containers = {c["id"]: container_view(account, c) for c in account.of_type("container")}
    before_values = {v["id"]: v["attributes"]["value"] for v in account.custom_fields.values()}
    before_documents = {d["id"]: d["attributes"]["updated_at"] for d in every_page(app, "/v2/documents")}
    old_clock = account.clock
    delivered: list[tuple[str, str, str]] = []
    counts = advance(
        app.state.world,
        account,
        lambda acct, kind, ref, included, at: delivered.append((kind, included[0]["id"], at)),
        Changes(new_documents=5, changed_documents=3, containers=4, custom_field_values=6),
        seed=1,
    )
    clock = account.clock.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert counts == {"clock": clock, "new_documents": 5, "changed_documents": 3, "containers": 4, "custom_field_values": 6}
    # No hours asked: a minute, for the new documents, or as far as the moved boxes' next milestones.
    assert account.clock >= old_clock + timedelta(minutes=1) and max(at for *_, at in delivered) <= clock
    changed = [c["id"] for c in account.of_type("container") if container_view(account, c) != before_containers[c["id"]]]
    assert len(changed) == 4 and {container for _, container, _ in delivered} == set(changed)
    assert sum(v["attributes"]["value"] != before_values[v["id"]] for v in account.custom_fields.values()) == 6
    after = every_page(app, "/v2/documents?sort=-created_at")
    assert {d["id"] for d in after[:5]}.isdisjoint(before_documents) and len(after) == 505
    assert all(d["attributes"]["created_at"] > old_clock.strftime("%Y-%m-%dT%H:%M:%SZ") for d in after[:5])
    assert sum(d["attributes"]["updated_at"] != before_documents[d["id"]] for d in after[5:]) == 3


def test_the_admin_route_takes_the_accounts_key_and_checks_its_numbers(app: SandboxApp) -> None:
    (counts,) = call(app, ("POST", "/_admin/advance?hours=24&documents=10&containers=2"))
    a_day_on = (app.state.world.start + timedelta(hours=24)).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert (counts["new_documents"], counts["containers"]) == (10, 2) and counts["clock"] >= a_day_on

    async def refused() -> list[int]:
        transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
        async with httpx.AsyncClient(transport=transport, base_url="http://sandbox.test") as client:
            return [
                (await client.post("/_admin/advance?documents=1")).status_code,
                (await client.post("/_admin/advance?documents=-1", headers=AUTH)).status_code,
            ]

    assert asyncio.run(refused()) == [401, 400]
