"""The rarer turns of a planned journey, so a run of journeys shows every event kind the service sends.

Some vessels berth a while after arriving; some hub legs are a feeder's rather than a
transshipment's; some shipments change their POD terminal while at sea; boxes that go inland by
rail arrive at the inland destination, with an estimate of when first; and the service sends
estimates about each box (its vessel's arrival as the shipment's ETA moves, on some its
departure, inland its arrival at the destination). Drawn from a generator of their own (seeded by
the shipment's id), so the base plan (`journey_plan.py`) stays as it was seeded.
"""

from __future__ import annotations

import random
from dataclasses import replace
from typing import TYPE_CHECKING

from shipsync_sandbox.places import terminal_id
from shipsync_sandbox.timeline import HOUR

if TYPE_CHECKING:
    from shipsync_sandbox.journey_model import ContainerPlan, ShipmentPlan

TRANSSHIPMENT = "container.transport.transshipment_"
FEEDER = "container.transport.feeder_"


def add_variants(plan: ShipmentPlan) -> None:
    rng = random.Random(f"journey-variants/{plan.shipment_id}")
    feeder, berths, changes_terminal, estimates_departure = (rng.random() < p for p in (0.5, 0.5, 0.2, 0.3))
    plan.manifest_awaited = rng.random() < 0.3
    if changes_terminal:
        plan.first_pod_terminal_id = next(t for t in (terminal_id(plan.pod, 0), terminal_id(plan.pod, 1)) if t != plan.pod_terminal_id)
        plan.pod_terminal_changed_at = plan.atd + HOUR * int((plan.ata - plan.atd) / HOUR * 0.6)
    for box in plan.containers.values():
        if feeder:
            box.steps = [replace(s, kind=s.kind.replace(TRANSSHIPMENT, FEEDER)) for s in box.steps]
        if berths:
            _berth(box)
        if box.rail:
            _arrive_inland(plan, box)
        box.estimates += [("container.transport.estimated.vessel_arrived", made, eta) for made, eta in plan.estimates]
        if estimates_departure:
            full_in = box.at("container.transport.full_in")
            if full_in is not None:
                box.estimates.append(("container.transport.estimated.vessel_departed", full_in + HOUR, plan.etd))
        box.steps.sort(key=lambda s: s.at)


def _berth(box: ContainerPlan) -> None:
    """Berthed between arriving (at anchor) and discharging: a third of the way, in whole hours."""
    arrived = next(s for s in box.steps if s.kind == "container.transport.vessel_arrived")
    gap = box.discharged_at - arrived.at
    box.steps.append(replace(arrived, kind="container.transport.vessel_berthed", at=arrived.at + HOUR * max(1, int(gap / HOUR / 3))))


def _arrive_inland(plan: ShipmentPlan, box: ContainerPlan) -> None:
    """At the inland destination between the train's arrival and unloading; estimated when it left the port."""
    arrived = next(s for s in box.steps if s.kind == "container.transport.rail_arrived")
    unloaded = box.at("container.transport.rail_unloaded")
    departed = box.at("container.transport.rail_departed")
    if unloaded is None or departed is None:
        return
    at = arrived.at + HOUR * max(1, int((unloaded - arrived.at) / HOUR / 2))
    box.steps.append(replace(arrived, kind="container.transport.arrived_at_inland_destination", at=at))
    if plan.destination_eta is not None:
        box.estimates.append(("container.transport.estimated.arrived_at_inland_destination", departed + HOUR, plan.destination_eta))
