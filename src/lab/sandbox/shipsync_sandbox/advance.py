"""A day in the life of an account, on demand (`POST /_admin/advance`): the clock moves on, new
documents arrive, some old ones change, some containers reach their next milestone (their webhooks
are delivered, as the service's change feed), some custom field values are edited in the app.

Nothing happens after the account's clock: a container is moved to its next milestone only up to
the clock, so when the asked-for number of containers have no milestone that soon the clock moves
on to the last of theirs (the soonest milestones are taken first). Containers not moved stay as
they were known, so exactly the asked-for number change.

What changed is chosen from a generator seeded by the request's `seed` and the clock, so the same
calls on the same sandbox change the same records; the counts say exactly how much changed, which
is what an incremental sync is measured against (issue 14: the daily sync where 1% changed).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta

from shipsync_sandbox.custom_field_store import changed_value
from shipsync_sandbox.document_store import DocumentStore
from shipsync_sandbox.journey_model import ShipmentPlan
from shipsync_sandbox.journeys import Emit, Sending, deliver, journey_events
from shipsync_sandbox.resources import Resource
from shipsync_sandbox.timeline import iso
from shipsync_sandbox.world import Account, World


@dataclass(frozen=True)
class Changes:
    hours: int = 0
    new_documents: int = 0
    changed_documents: int = 0
    containers: int = 0
    custom_field_values: int = 0


def advance(world: World, account: Account, emit: Emit, changes: Changes, *, seed: int = 0) -> dict[str, object]:
    old = account.clock
    span = timedelta(hours=changes.hours) if changes.hours else timedelta(minutes=1 if changes.new_documents else 0)
    rng = random.Random(f"advance/{seed}/{iso(old + span)}")
    moving = _next_milestones(account, changes.containers, old + span, rng)
    account.clock = new = max([old + span, *(after for _, _, after in moving)])
    store = account.documents
    added: list[str] = []
    if isinstance(store, DocumentStore):
        steps = changes.new_documents + 1
        added = store.add([old + span * (n + 1) / steps for n in range(changes.new_documents)])
        for d in rng.sample(range(store.count - len(added)), min(changes.changed_documents, store.count - len(added))):
            store.touch(d, new)
    _move_containers(account, emit, moving)
    values = rng.sample(list(account.custom_fields.values()), min(changes.custom_field_values, len(account.custom_fields)))
    for n, value in enumerate(values):
        changed_value(world, account, value, rng.randrange(10**6) + n)
    return {
        "clock": iso(new),
        "new_documents": len(added),
        "changed_documents": min(changes.changed_documents, len(store) - len(added)),
        "containers": len(moving),
        "custom_field_values": len(values),
    }


def _next_milestones(account: Account, count: int, by: datetime, rng: random.Random) -> list[tuple[Resource, ShipmentPlan, datetime]]:
    """`count` containers whose journey is not over, each with its next milestone: drawn from those
    whose next milestone comes by `by`, then the soonest of the others."""
    if count == 0:
        return []
    candidates = []
    for container in account.of_type("container"):
        plan = account.plans.get(account.shipment_of.get(container["id"], ""))
        if plan is None:
            continue
        before = account.as_of(container["id"])
        after = next((s.at for s in plan.containers[container["id"]].steps if s.at > before), None)
        if after is not None:
            candidates.append((container, plan, after))
    soon = [c for c in candidates if c[2] <= by]
    chosen = rng.sample(soon, min(count, len(soon)))
    later = sorted((c for c in candidates if c[2] > by), key=lambda c: (c[2], c[0]["id"]))
    return chosen + later[: count - len(chosen)]


def _move_containers(account: Account, emit: Emit, moving: list[tuple[Resource, ShipmentPlan, datetime]]) -> None:
    """Move each container to its next milestone and deliver what happened on the way."""
    for container, plan, after in moving:
        before = account.as_of(container["id"])
        shipment = account.resource("shipment", plan.shipment_id)
        if shipment is None:
            continue
        events: list[Sending] = [
            (at, kind, ref, places, shipment, container)
            for at, kind, ref, places in journey_events(account, container, plan)
            if before < at <= after
        ]
        account.refreshed[container["id"]] = after
        deliver(account, emit, events)
