"""The sandbox's world is consistent over every journey, deterministic from its seed, and the same
records reach the client through reads, documents' includes and webhook deliveries."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from typing import Any

import httpx
import pytest

from shipsync.api.tracking_models import Container
from shipsync.warehouse.members import members_of
from shipsync_sandbox import SandboxOptions, create_app
from shipsync_sandbox.journeys import simulate
from shipsync_sandbox.seed import AccountSize, build_world
from shipsync_sandbox.timeline import DAY, REFERENCE_START, parse
from shipsync_sandbox.views import container_view, shipment_view
from shipsync_sandbox.world import World
from support.sandboxes import K1

CONTAINER_ATTRIBUTES = {m.name for m in members_of(Container) if m.kind not in ("ref", "refs")}

TRANSPORT_ORDER = (
    "container.transport.empty_out",
    "container.transport.full_in",
    "container.transport.vessel_loaded",
    "container.transport.vessel_departed",
    "container.transport.vessel_arrived",
    "container.transport.vessel_discharged",
    "container.transport.available",
    "container.transport.full_out",
    "container.transport.delivered",
    "container.transport.empty_in",
)


@pytest.fixture(scope="module")
def world() -> World:
    return build_world(["k"], start=REFERENCE_START, size=AccountSize(documents=400))


def test_every_journey_keeps_the_order_of_a_real_one(world: World) -> None:
    account = world.accounts["k"]
    for plan in account.plans.values():
        assert plan.etd < plan.atd < plan.ata
        assert all(plan.atd < made < eta and made < plan.ata for made, eta in plan.estimates)
        for box in plan.containers.values():
            times = {s.kind: s.at for s in box.steps}
            kinds = [s.kind for s in box.steps]
            assert [k for k in kinds if k in TRANSPORT_ORDER] == list(TRANSPORT_ORDER)
            assert kinds[-1] == "container.transport.empty_in"
            assert times["container.transport.vessel_arrived"] == plan.ata < box.discharged_at < box.available_at < box.full_out_at
            assert box.released_at is None or box.released_at <= box.available_at
            known = times.get("container.transport.rail_unloaded", box.discharged_at)
            assert timedelta(days=2) <= box.last_free_day - known <= timedelta(days=6), "last free day a few days after"
            if box.rail:
                assert plan.inland and times["container.transport.rail_loaded"] > box.discharged_at
                assert times["container.transport.rail_unloaded"] > times["container.transport.rail_arrived"]


def test_holds_fees_rail_legs_and_eta_slips_occur_on_some_not_all(world: World) -> None:
    account = world.accounts["k"]
    boxes = [b for p in account.plans.values() for b in p.containers.values()]
    shares = {
        "holds": sum(bool(b.holds) for b in boxes) / len(boxes),
        "exam fees": sum(b.exam_fee for b in boxes) / len(boxes),
        "rail": sum(b.rail is not None for b in boxes) / len(boxes),
        "extended lfd": sum(b.extended_lfd is not None for b in boxes) / len(boxes),
        "eta slips": sum(bool(p.estimates) for p in account.plans.values()) / len(account.plans),
    }
    assert all(0.05 < share < 0.6 for share in shares.values()), shares
    served = [container_view(account, c)["attributes"] for c in account.of_type("container")]
    assert any(a["fees_at_pod_terminal"] for a in served) and any(a["holds_at_pod_terminal"] for a in served)
    assert {"available", "on_ship", "empty_returned", "new"} <= {a["current_status"] for a in served}
    for a in served:
        fees = a["fees_at_pod_terminal"]
        if fees:
            assert fees[-1]["type"] == "total" and fees[-1]["amount"] == sum(f["amount"] for f in fees[:-1])


def test_served_records_agree_with_the_clock(world: World) -> None:
    account = world.accounts["k"]
    now = account.clock
    for shipment in account.of_type("shipment"):
        a = shipment_view(account, shipment)["attributes"]
        assert (a["pol_atd_at"] is not None) == (parse(a["pol_etd_at"]) < now and account.plans[shipment["id"]].atd <= now)
        assert a["pod_ata_at"] is None or parse(a["pod_ata_at"]) <= now
        if a["pod_eta_at"] != a["pod_original_eta_at"]:
            assert account.plans[shipment["id"]].estimates, "an ETA only moves by an estimate"
    for container in account.of_type("container"):
        a = container_view(account, container)["attributes"]
        if a["pod_discharged_at"]:
            assert parse(a["pod_arrived_at"]) < parse(a["pod_discharged_at"]) <= now and a["availability_known"]
        if a["pickup_lfd"]:
            assert DAY < parse(a["pickup_lfd"]) - parse(a["pod_discharged_at"]) < 8 * DAY  # 3-5 days, 2 more if extended
        if a["current_status"] == "available":
            assert a["available_for_pickup"] and not a["holds_at_pod_terminal"] and a["pod_full_out_at"] is None


def test_the_same_seed_gives_the_same_world_and_another_seed_another() -> None:
    def served(world: World) -> str:
        account = world.accounts["k"]
        return json.dumps([container_view(account, c) for c in account.of_type("container")], sort_keys=True)

    small = AccountSize(documents=30)
    assert served(build_world(["k"], start=REFERENCE_START, seed=3, size=small)) == served(
        build_world(["k"], start=REFERENCE_START, seed=3, size=small)
    )
    assert served(build_world(["k"], start=REFERENCE_START, seed=3, size=small)) != served(
        build_world(["k"], start=REFERENCE_START, seed=4, size=small)
    )


def test_deliveries_carry_the_full_records_as_of_each_event_and_reads_show_where_the_journeys_are() -> None:
    app = create_app(SandboxOptions(api_keys=(K1,), documents=40, rate_limit=None))
    account = app.state.world.accounts[K1]
    deliveries: list[tuple[str, dict[str, Any], list[dict[str, Any]], str]] = []
    simulate(account, lambda acct, kind, ref, included, at: deliveries.append((kind, ref, included, at)), containers=6)
    kinds = {kind for kind, *_ in deliveries}
    assert {"container.updated", "container.pickup_lfd.changed", "shipment.estimated.arrival", "container.transport.rail_loaded"} <= kinds
    last: dict[str, dict[str, Any]] = {}
    for _kind, reference, included, at in deliveries:
        types = {r["type"] for r in included}
        assert "shipment" in types and types <= {"container", "shipment", "port", "terminal"}  # as the reference's examples carry
        for record in included:
            if record["type"] == "container":
                assert set(record["attributes"]) == CONTAINER_ATTRIBUTES  # every member the declaration names, as the real service
                stored = account.resource("container", record["id"])
                assert record == container_view(account, stored, parse(at))  # type: ignore[arg-type]
                last[record["id"]] = record
        if reference["type"] == "container_updated_event":
            container = next(r for r in included if r["type"] == "container")
            for name, (_, new) in reference["attributes"]["changeset"].items():
                assert container["attributes"][name] == new, name
    assert max(at for *_, at in deliveries) <= account.clock.strftime("%Y-%m-%dT%H:%M:%SZ")  # played up to now
    served = asyncio.run(_read(app, [f"/containers/{container_id}" for container_id in last]))
    for body, record in zip(served, last.values(), strict=True):
        stored = account.resource("container", record["id"])
        assert body["data"]["attributes"] == container_view(account, stored)["attributes"]  # type: ignore[arg-type]
        if body["data"]["attributes"]["current_status"] == "empty_returned":  # the journey is over: its last event is where it is
            assert body["data"]["attributes"]["empty_terminated_at"] == record["attributes"]["empty_terminated_at"]


async def _read(app: Any, paths: list[str]) -> list[Any]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://sandbox.test/v2", headers={"Authorization": f"Token {K1}"}
    ) as client:
        return [(await client.get(path)).raise_for_status().json() for path in paths]


def test_documents_include_the_same_shipments_and_containers_the_reads_serve() -> None:
    app = create_app(SandboxOptions(api_keys=(K1,), documents=20, rate_limit=None))
    account = app.state.world.accounts[K1]
    paths = [f"/documents/{d}?include=shipments,cargos" for d in list(account.documents)[:8]]
    for body in asyncio.run(_read(app, paths)):
        included = body["included"]
        reads = asyncio.run(_read(app, [f"/{r['type']}s/{r['id']}" for r in included]))
        assert [r["data"] for r in reads] == included
        assert {r["type"] for r in included} == {"shipment", "container"}
