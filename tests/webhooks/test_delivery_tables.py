"""Deliveries fill the typed tables: every included resource with exactly the values it carried (the
newest copy of each), `container.updated` changesets applied, and any order of arrival gives the
same tables."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import orjson
import pytest

from shipsync.warehouse.declared_tables import DECLARED_BY_TYPE
from shipsync_sandbox.deliver import envelope
from shipsync_sandbox.journeys import simulate
from support.sandboxes import RunningSandbox
from support.warehouse_rows import assert_rows_hold, container_updated, load_deliveries, rows, write_container

# What deliveries carry (the reference's examples): events, the container and shipment, ports and terminals.
TABLES = ("shipments", "containers", "transport_events", "estimated_events", "ports", "terminals")


def deliveries(sandbox: RunningSandbox, containers: int) -> list[bytes]:
    account = next(iter(sandbox.state.world.accounts.values()))
    bodies: list[bytes] = []

    def emit(acct: Any, event: str, reference: dict[str, Any], included: list[dict[str, Any]], created_at: str) -> None:
        bodies.append(orjson.dumps(envelope("w", event, reference, [reference, *included], created_at)))

    simulate(account, emit, containers=containers)
    return bodies


def snapshot(warehouse: Path) -> dict[str, list[dict[str, Any]]]:
    ignore = {"_synced_at", "_run_id", "first_seen_at", "last_changed_at"}
    return {t: [{k: v for k, v in r.items() if k not in ignore} for r in rows(warehouse, f"SELECT * FROM {t} ORDER BY id")] for t in TABLES}


@pytest.mark.slow
def test_deliveries_fill_typed_tables_in_any_order(sandbox: RunningSandbox, tmp_path: Path) -> None:
    bodies = deliveries(sandbox, containers=4)
    first = tmp_path / "a" / "w"
    load_deliveries(first, bodies)
    newest: dict[tuple[str, str], tuple[str, dict[str, Any]]] = {}
    kinds = set()
    for body in bodies:
        document = orjson.loads(body)
        kinds.add(document["data"]["attributes"]["event"])
        stamp = document["data"]["attributes"]["created_at"]
        for resource in document["included"]:
            key = (resource["type"], resource["id"])
            if resource["type"] in DECLARED_BY_TYPE and (key not in newest or newest[key][0] <= stamp):
                newest[key] = (stamp, resource)
    assert len(kinds) > 10 and {"transport_event", "estimated_event", "container", "shipment", "port", "terminal"} <= {t for t, _ in newest}
    # Containers also took the changesets applied after them; every other record is exactly its newest copy.
    assert assert_rows_hold(first, [r for (t, _), (_, r) in newest.items() if t != "container"]) > 100
    for table in TABLES:
        assert rows(first, f"SELECT count(*) AS n FROM {table}")[0]["n"] > 0, table

    shuffled = bodies[:]
    random.Random(7).shuffle(shuffled)
    second = tmp_path / "b" / "w"
    load_deliveries(second, shuffled)
    assert snapshot(second) == snapshot(first)


def test_container_updated_changesets_apply_unless_older(warehouse: Path) -> None:
    write_container(warehouse, {"id": "c-1", "type": "container", "attributes": {"number": "MSKU1234565"}}, "2026-05-20T10:00:00Z")
    holds = [{"name": "customs", "status": "hold", "description": "exam"}]
    load_deliveries(
        warehouse,
        [
            container_updated(
                "c-1", "2026-05-21T10:00:00Z", {"available_for_pickup": [None, False], "holds_at_pod_terminal": [[], holds]}, "n-2"
            ),
            container_updated(
                "c-1", "2026-05-19T10:00:00Z", {"available_for_pickup": [None, True], "pickup_lfd": [None, "2026-05-25"]}, "n-1"
            ),
            container_updated(
                "c-1", "2026-05-22T10:00:00Z", {"pickup_lfd": [None, "2026-05-27T00:00:00Z"], "unknown_member": [1, 2]}, "n-3"
            ),
        ],
    )
    (row,) = rows(warehouse, "SELECT * FROM containers")
    assert row["available_for_pickup"] is False  # n-1 is older than the row: not applied
    assert row["holds_at_pod_terminal"] == holds and row["has_holds"] is True
    assert row["pickup_lfd"].isoformat() == "2026-05-27T00:00:00+00:00"
    assert row["last_event_id"] == "n-3" and row["observed_at"].isoformat() == "2026-05-22T10:00:00+00:00"
