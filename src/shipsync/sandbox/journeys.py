"""Simulated container journeys: each seeded container moves from empty pick-up at origin to
empty return at destination, emitting the webhook events the service would, with realistic
included resources (transport event, container, shipment, vessel, port), ETA changes,
`container.updated` changesets, last-free-day changes, and kinds beyond the subscribable 34."""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from shipsync.sandbox.reference import stable_id
from shipsync.sandbox.world import EPOCH, Account, iso

VESSELS = ("MAERSK EMDEN", "MSC GULSUN", "CMA CGM JACQUES SAADE", "EVER ACE", "HMM ALGECIRAS", "ONE INNOVATION")
HUBS = ("SGSIN", "KRPUS", "CNYTN")
Emit = Callable[[Account, str, dict[str, Any], list[dict[str, Any]], str], None]


def _port(locode: str) -> dict[str, Any]:
    return {"id": stable_id("port", locode), "type": "port", "attributes": {"locode": locode, "name": locode}}


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
        for n, (kind, locode, day, extra) in enumerate(journey(rng, container, shipment, start)):
            at = iso(start + timedelta(days=day, hours=n))
            rel = {
                "container": {"data": {"type": "container", "id": container["id"]}},
                "shipment": {"data": {"type": "shipment", "id": shipment["id"]}},
            }
            included = [container, shipment, _port(locode)]
            if extra.get("estimated"):
                reference = {
                    "id": stable_id("estimated_event", container["id"], n),
                    "type": "estimated_event",
                    "attributes": {
                        "event": kind,
                        "estimated_timestamp": iso(start + timedelta(days=20 + rng.randint(-2, 3))),
                        "location_locode": locode,
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
            # The container as of this event: its state moves with the journey.
            moving = {
                **container,
                "attributes": {**container["attributes"], "last_event": kind, "last_event_at": at, "current_locode": locode},
            }
            included[0] = moving
            emit(account, kind, reference, included, at)
            emitted += 1
    return emitted
