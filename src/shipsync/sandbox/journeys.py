"""Simulated container journeys: each seeded container moves from empty pick-up at origin to
empty return at destination, emitting the webhook events the service would, with realistic
included resources (transport event, container, shipment, vessel, port), ETA changes,
`container.updated` changesets, last-free-day changes, and kinds beyond the subscribable 34."""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from shipsync.sandbox.reference import port_resource, stable_id
from shipsync.sandbox.world import EPOCH, Account, iso

VESSELS = ("MAERSK EMDEN", "MSC GULSUN", "CMA CGM JACQUES SAADE", "EVER ACE", "HMM ALGECIRAS", "ONE INNOVATION")
HUBS = ("SGSIN", "KRPUS", "CNYTN")
Emit = Callable[[Account, str, dict[str, Any], list[dict[str, Any]], str], None]


# A container's status after each kind of event (the service's `current_status` values).
STATUS_AFTER = {
    "container.transport.empty_out": "new",
    "container.transport.vessel_loaded": "on_ship",
    "container.transport.vessel_departed": "on_ship",
    "container.transport.transshipment_loaded": "on_ship",
    "container.transport.transshipment_departed": "on_ship",
    "container.transport.vessel_discharged": "not_available",
    "container.transport.rail_loaded": "on_rail",
    "container.transport.rail_departed": "on_rail",
    "container.transport.rail_unloaded": "not_available",
    "container.transport.not_available": "not_available",
    "container.transport.available": "available",
    "container.transport.full_out": "picked_up",
    "container.transport.delivered": "delivered",
    "container.transport.empty_in": "empty_returned",
}


def _moved(container: dict[str, Any], kind: str, at: str, state: dict[str, Any]) -> dict[str, Any]:
    """The container as of an event: its status and the milestone times it has reached so far."""
    for name, kinds in (
        ("pod_arrived_at", ("container.transport.vessel_arrived",)),
        ("pod_discharged_at", ("container.transport.vessel_discharged",)),
        ("pod_full_out_at", ("container.transport.full_out",)),
        ("empty_terminated_at", ("container.transport.empty_in",)),
    ):
        if kind in kinds:
            state[name] = at
    state["current_status"] = STATUS_AFTER.get(kind, state.get("current_status", "new"))
    if kind == "container.transport.available":
        state.update(availability_known=True, available_for_pickup=True)
    return {**container, "attributes": {**container["attributes"], **state}}


def journey(
    rng: random.Random, container: dict[str, Any], shipment: dict[str, Any], start: datetime
) -> list[tuple[str, str, int, dict[str, Any]]]:
    """(kind, locode, day, extra attributes) in the order they happen."""
    a = shipment["attributes"]
    pol, pod, dest = a["port_of_lading_locode"], a["port_of_discharge_locode"], a["destination_locode"]
    steps: list[tuple[str, str, int, dict[str, Any]]] = [
        ("container.transport.empty_out", pol, 0, {}),
        ("container.transport.full_in", pol, 2, {}),
        ("container.transport.vessel_loaded", pol, 4, {}),
        ("container.transport.vessel_departed", pol, 4, {}),
    ]
    if rng.random() < 0.5:
        hub = rng.choice(HUBS)
        steps += [
            (f"container.transport.transshipment_{k}", hub, d, {})
            for k, d in (("arrived", 10), ("discharged", 11), ("loaded", 12), ("departed", 12))
        ]
    steps += [
        ("shipment.estimated.arrival", pod, 14, {"estimated": True}),
        ("container.transport.vessel_arrived", pod, 20, {}),
        ("container.transport.vessel_discharged", pod, 21, {}),
        ("container.updated", pod, 21, {"changeset": True}),
        ("container.pickup_lfd.changed", pod, 21, {}),
    ]
    final = pod
    if dest != pod:
        steps += [
            ("container.transport.rail_loaded", pod, 23, {}),
            ("container.transport.rail_departed", pod, 23, {}),
            ("container.transport.rail_arrived", dest, 26, {}),
            ("container.transport.rail_unloaded", dest, 26, {}),
        ]
        final = dest
    if rng.random() < 0.3:
        steps.append(("container.transport.not_available", final, 27, {}))
    steps += [
        ("container.transport.available", final, 28, {}),
        ("container.transport.full_out", final, 30, {}),
        ("container.transport.delivered", final, 31, {}),
        ("container.transport.empty_in", final, 34, {}),
    ]
    return steps


def simulate(account: Account, emit: Emit, *, containers: int, seed: int = 1) -> int:
    """Emit the journeys of up to `containers` containers; returns how many events were emitted."""
    rng = random.Random(seed)
    chosen = [r for (t, _), r in sorted(account.related.items()) if t == "container"][:containers]
    emitted = 0
    for container in chosen:
        shipment = account.related[("shipment", container["relationships"]["shipment"]["data"]["id"])]
        start = EPOCH + timedelta(days=rng.randint(0, 120), hours=rng.randint(0, 23))
        vessel_name = rng.choice(VESSELS)
        vessel = {
            "id": stable_id("vessel", vessel_name),
            "type": "vessel",
            "attributes": {"name": vessel_name, "imo": f"9{rng.randrange(10**6):06d}"},
        }
        voyage = f"{rng.randint(100, 999)}{rng.choice('EWNS')}"
        progress: dict[str, Any] = {}
        for n, (kind, locode, day, extra) in enumerate(journey(rng, container, shipment, start)):
            at = iso(start + timedelta(days=day, hours=n))
            rel = {
                "container": {"data": {"type": "container", "id": container["id"]}},
                "shipment": {"data": {"type": "shipment", "id": shipment["id"]}},
            }
            included = [container, shipment, port_resource(locode)]
            if extra.get("estimated"):
                reference = {
                    "id": stable_id("estimated_event", container["id"], n),
                    "type": "estimated_event",
                    "attributes": {
                        "event": kind,
                        "estimated_timestamp": iso(start + timedelta(days=20 + rng.randint(-2, 3))),
                        "location_locode": locode,
                        "data_source": "shipping_line",
                        "created_at": at,
                    },
                    "relationships": rel,
                }
            elif extra.get("changeset"):
                reference = {
                    "id": stable_id("container_updated_event", container["id"], n),
                    "type": "container_updated_event",
                    "attributes": {
                        "timestamp": at,
                        "timezone": "UTC",
                        "data_source": "terminal",
                        "changeset": {
                            "pickup_lfd": [None, iso(start + timedelta(days=26))],
                            "available_for_pickup": [False, True],
                            "holds_at_pod_terminal": [["customs"], []],
                        },
                    },
                    "relationships": {"container": rel["container"]},
                }
            else:
                rel["vessel"] = {"data": {"type": "vessel", "id": vessel["id"]}}
                reference = {
                    "id": stable_id("transport_event", container["id"], n),
                    "type": "transport_event",
                    "attributes": {
                        "event": kind,
                        "timestamp": at,
                        "timezone": "UTC",
                        "location_locode": locode,
                        "voyage_number": voyage,
                        "created_at": at,
                        "data_source": "shipping_line",
                    },
                    "relationships": rel,
                }
                included.append(vessel)
            included[0] = _moved(container, kind, at, progress)  # its state moves with the journey
            emit(account, kind, reference, included, at)
            emitted += 1
    return emitted
