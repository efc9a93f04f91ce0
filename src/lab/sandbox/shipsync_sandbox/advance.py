"""A day in the life of an account, on demand (`POST /_admin/advance`): the clock moves on, new
documents arrive, some old ones change, some containers reach their next milestone (their webhooks
are delivered, as the service's change feed), some custom field values are edited in the app.

What changed is chosen from a generator seeded by the request's `seed` and the clock, so the same
calls on the same sandbox change the same records; the counts say exactly how much changed, which
is what an incremental sync is measured against (issue 14: the daily sync where 1% changed).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import timedelta

from shipsync_sandbox.custom_field_store import changed_value
from shipsync_sandbox.document_store import DocumentStore
from shipsync_sandbox.journeys import Emit, journey_events
from shipsync_sandbox.timeline import iso
from shipsync_sandbox.views import container_view, shipment_view
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
    account.clock = new = old + span
    rng = random.Random(f"advance/{seed}/{iso(new)}")
    store = account.documents
    added: list[str] = []
    if isinstance(store, DocumentStore):
        steps = changes.new_documents + 1
        added = store.add([old + span * (n + 1) / steps for n in range(changes.new_documents)])
        for d in rng.sample(range(store.count - len(added)), min(changes.changed_documents, store.count - len(added))):
            store.touch(d, new)
    moved = _move_containers(account, emit, changes.containers, rng)
    values = rng.sample(list(account.custom_fields.values()), min(changes.custom_field_values, len(account.custom_fields)))
    for n, value in enumerate(values):
        changed_value(world, account, value, rng.randrange(10**6) + n)
    return {
        "clock": iso(new),
        "new_documents": len(added),
        "changed_documents": min(changes.changed_documents, len(store) - len(added)),
        "containers": moved,
        "custom_field_values": len(values),
    }


def _move_containers(account: Account, emit: Emit, count: int, rng: random.Random) -> int:
    """Move `count` containers whose journey is not over to their next milestone; deliver its events."""
    if count == 0:
        return 0
    moving = []
    for container in account.of_type("container"):
        plan = account.plans.get(account.shipment_of.get(container["id"], ""))
        if plan is not None and account.as_of(container["id"]) < plan.containers[container["id"]].steps[-1].at:
            moving.append((container, plan))
    chosen = rng.sample(moving, min(count, len(moving)))
    for container, plan in chosen:
        before = account.as_of(container["id"])
        after = next(s.at for s in plan.containers[container["id"]].steps if s.at > before)
        shipment = account.resource("shipment", plan.shipment_id)
        for at, kind, reference, places in journey_events(account, container, plan):
            if before < at <= after and shipment is not None:
                records = [container_view(account, container, at), shipment_view(account, shipment, at)]
                emit(account, kind, reference, [*records, *places], iso(at))
        account.progress[container["id"]] = after
    return len(chosen)
