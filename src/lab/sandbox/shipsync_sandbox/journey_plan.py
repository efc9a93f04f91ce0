"""The whole journey of a seeded shipment and each of its containers, planned once from the seed.

A plan holds times only; `journey_state.py` renders a shipment or container as of any instant from
it, and `journeys.py` delivers its events. Drawn from a generator seeded by the shipment's id
(never from the account's generator), so adding members never changes seeded data; a shipment is
planned when first served (`PlanBook`), so seeding a large account costs no planning.
The rules every plan keeps (tests/lab/sandbox/test_world.py checks them): ETD before ATD before ATA; estimates
made before the arrival they estimate; discharge after arrival, availability after discharge (and
after any hold is released); the last free day a few days after discharge; full out after
availability; empty return last. Some boxes carry holds, exam fees, an extended last free day, a
rail leg to an inland destination; some shipments' ETA slips, with estimated events. The rarer
legs and changes (`journey_variants.py`) are drawn from a generator of their own.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping
from datetime import datetime, timedelta

from shipsync_sandbox.carriers import RAIL_CARRIERS
from shipsync_sandbox.journey_model import ContainerPlan, ShipmentPlan, Step
from shipsync_sandbox.journey_variants import add_variants
from shipsync_sandbox.places import HUBS, VESSELS, destination_metro, rail_terminal_id, terminal_id
from shipsync_sandbox.resources import Resource
from shipsync_sandbox.timeline import DAY, HOUR, day_start, parse

HOLDS = (
    {"name": "customs", "status": "hold", "description": "CBP exam ordered"},
    {"name": "freight", "status": "pending", "description": "Freight charges unpaid"},
    {"name": "USDA", "status": "hold", "description": None},
)


def _hours(rng: random.Random, low: int, high: int) -> timedelta:
    """Whole hours from low to high (`random()` rather than `randint`: planning 20,000 boxes stays quick)."""
    return HOUR * int(low + rng.random() * (high - low + 1))


def plan_shipment(shipment: Resource, container_ids: list[str]) -> ShipmentPlan:
    a = shipment["attributes"]
    rng = random.Random(f"journey/{shipment['id']}")
    etd, original_eta = parse(a["pol_etd_at"]), parse(a["pod_original_eta_at"])
    atd = etd + _hours(rng, 4, 40)
    transit = original_eta - etd
    draw = rng.random()
    slip = (
        DAY * rng.randint(1, 6) + _hours(rng, 0, 23) if draw < 0.35 else -_hours(rng, 6, 20) if draw < 0.45 else HOUR * rng.randint(-8, 8)
    )
    ata = max(original_eta + slip, atd + 5 * DAY)
    estimates = []
    if abs(slip) >= DAY:
        estimates = [(atd + transit * 0.4, original_eta + slip / 2), (atd + transit * 0.7, ata)]
    hub = rng.choice([h for h in HUBS if h != a["port_of_lading_locode"]]) if rng.random() < 0.4 else None
    vessels = rng.sample([v[0] for v in VESSELS], 2)
    voyages = [f"{rng.randint(100, 999)}{rng.choice('EWNS')}" for _ in range(2)]
    pod, destination = a["port_of_discharge_locode"], a["destination_locode"]
    plan = ShipmentPlan(
        shipment_id=shipment["id"],
        pol=a["port_of_lading_locode"],
        pod=pod,
        destination=destination,
        etd=etd,
        atd=atd,
        original_eta=original_eta,
        estimates=estimates,
        ata=ata,
        pod_vessel=vessels[-1],
        pod_voyage=voyages[-1],
        pod_terminal_id=terminal_id(pod, rng.randrange(2)),
        destination_terminal_id=rail_terminal_id(destination, destination_metro(shipment["id"], destination))
        if destination != pod
        else None,
        destination_eta=ata + DAY * rng.randint(5, 8) if destination != pod else None,
        destination_metro=destination_metro(shipment["id"], destination),
    )
    hub_times = (atd + transit * 0.35, atd + transit * 0.35 + DAY * rng.randint(1, 3)) if hub else None
    for container_id in container_ids:
        plan.containers[container_id] = _plan_container(rng, plan, container_id, hub, hub_times, vessels, voyages)
    add_variants(plan)
    return plan


def _plan_container(
    rng: random.Random,
    plan: ShipmentPlan,
    container_id: str,
    hub: str | None,
    hub_times: tuple[datetime, datetime] | None,
    vessels: list[str],
    voyages: list[str],
) -> ContainerPlan:
    pod_terminal = ("terminal", plan.pod_terminal_id)
    first = (vessels[0], voyages[0]) if hub else (vessels[-1], voyages[-1])
    steps = [
        Step("container.transport.empty_out", plan.etd - _hours(rng, 50, 70), plan.pol),
        Step("container.transport.full_in", plan.etd - _hours(rng, 24, 40), plan.pol, data_source="terminal"),
        Step("container.transport.vessel_loaded", plan.atd - _hours(rng, 4, 10), plan.pol, vessel=first[0], voyage=first[1]),
        Step("container.transport.vessel_departed", plan.atd, plan.pol, vessel=first[0], voyage=first[1]),
    ]
    if hub and hub_times:
        arrived, departed = hub_times
        steps += [
            Step("container.transport.transshipment_arrived", arrived, hub, vessel=first[0], voyage=first[1]),
            Step("container.transport.transshipment_discharged", arrived + _hours(rng, 4, 12), hub, vessel=first[0], voyage=first[1]),
            Step("container.transport.transshipment_loaded", departed - _hours(rng, 3, 8), hub, vessel=vessels[1], voyage=voyages[1]),
            Step("container.transport.transshipment_departed", departed, hub, vessel=vessels[1], voyage=voyages[1]),
        ]
    discharged = plan.ata + _hours(rng, 6, 40)
    steps += [
        Step("container.transport.vessel_arrived", plan.ata, plan.pod, pod_terminal, plan.pod_vessel, plan.pod_voyage, "ais"),
        Step("container.transport.vessel_discharged", discharged, plan.pod, pod_terminal, plan.pod_vessel, plan.pod_voyage, "terminal"),
    ]
    holds = [dict(rng.choice(HOLDS))] if rng.random() < 0.3 else []
    released = discharged + _hours(rng, 10, 19 if plan.inland else 90) if holds else None
    rail = None
    if plan.inland:
        rail = (rng.choice(RAIL_CARRIERS[:2]), rng.choice(RAIL_CARRIERS))
        ramp = ("rail_terminal", plan.destination_terminal_id or "")
        loaded = discharged + _hours(rng, 20, 50)
        arrived = loaded + _hours(rng, 64, 110)
        unloaded = arrived + _hours(rng, 4, 12)
        steps += [
            Step("container.transport.rail_loaded", loaded, plan.pod, pod_terminal, data_source="terminal"),
            Step("container.transport.rail_departed", loaded + _hours(rng, 2, 6), plan.pod, pod_terminal),
            Step("container.transport.rail_arrived", arrived, plan.destination, ramp),
            Step("container.transport.rail_unloaded", unloaded, plan.destination, ramp, data_source="terminal"),
        ]
        place, facility, ready = plan.destination, ramp, unloaded + _hours(rng, 2, 12)
        last_free_day = day_start(unloaded) + 3 * DAY
    else:
        place, facility, ready = plan.pod, pod_terminal, discharged + _hours(rng, 2, 20)
        last_free_day = day_start(discharged) + DAY * rng.randint(3, 5)
        if holds:
            steps.append(Step("container.transport.not_available", discharged + HOUR, place, facility, data_source="terminal"))
    available = max(ready, released or ready)
    steps.append(Step("container.transport.available", available, place, facility, data_source="terminal"))
    extended = (available + _hours(rng, 12, 30), last_free_day + 2 * DAY) if rng.random() < 0.2 else None
    full_out = available + _hours(rng, 10, 150)
    delivered = full_out + _hours(rng, 3, 20)
    steps += [
        Step("container.transport.full_out", full_out, place, facility, data_source="terminal"),
        Step("container.transport.delivered", delivered, place),
        Step("container.transport.empty_in", delivered + _hours(rng, 48, 140), place, data_source="terminal"),
    ]
    steps.sort(key=lambda s: s.at)
    return ContainerPlan(
        container_id=container_id,
        steps=steps,
        seal_number=f"{rng.choice('ABCEHKMS')}{rng.randrange(10**7):07d}",
        holds=holds,
        released_at=released,
        discharged_at=discharged,
        available_at=available,
        full_out_at=full_out,
        last_free_day=last_free_day,
        extended_lfd=extended,
        appointment_at=full_out - _hours(rng, 1, 3) if rng.random() < 0.6 else None,
        exam_fee=rng.random() < 0.12,
        rail=rail,
    )


class PlanBook(Mapping[str, ShipmentPlan]):
    """An account's journey plans by shipment id, each made when first asked for."""

    def __init__(self) -> None:
        self._sources: dict[str, tuple[Resource, list[str]]] = {}
        self._plans: dict[str, ShipmentPlan] = {}

    def register(self, shipment: Resource, container_ids: list[str]) -> None:
        self._sources[shipment["id"]] = (shipment, container_ids)

    def __getitem__(self, shipment_id: str) -> ShipmentPlan:
        plan = self._plans.get(shipment_id)
        if plan is None:
            plan = self._plans[shipment_id] = plan_shipment(*self._sources[shipment_id])
        return plan

    def __iter__(self) -> Iterator[str]:
        return iter(self._sources)

    def __len__(self) -> int:
        return len(self._sources)
