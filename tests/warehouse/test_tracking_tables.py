"""Typed tracking tables: `pull all` fills them with exactly what the service served, older data
never rolls a row back, and odd members never fail a load (they land in `leftovers`)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import orjson
import pytest

from shipsync.api.tracking_reads import CONTAINER_INCLUDES
from shipsync.pull.everything import pull_all
from support.sandboxes import RunningSandbox, settings_for
from support.warehouse_rows import assert_rows_hold, rows, write_container

NEW_TABLES = ("shipments", "containers", "transport_events", "ports", "terminals", "vessels", "shipping_lines")


# Slow (a whole pull_all, every column of >1000 resources): test_pull and test_data_dictionary run pull_all in the fast tier.
@pytest.mark.slow
def test_pull_all_fills_every_new_table_with_what_was_served(sandbox: RunningSandbox, warehouse: Path) -> None:
    settings = settings_for(sandbox, warehouse)
    records = pull_all(settings)
    assert all(not r.errors and not r.not_found for r in records), [(r.flow, r.errors, r.not_found) for r in records]
    for table in NEW_TABLES:
        assert rows(warehouse, f"SELECT count(*) AS n FROM {table}")[0]["n"] > 0, table

    async def served() -> list[dict[str, Any]]:
        """The containers with their shipments (the listing), and some with their terminals and
        transport events (the listing does not carry those: one container read by id does)."""
        async with sandbox.client() as client:
            found = [r async for page in client.containers.list_pages(include=CONTAINER_INCLUDES) for r in [*page.data, *page.included]]
            for box in [r for r in found if r["type"] == "container"][:20]:
                found += (await client.containers.get_page(box["id"], include=CONTAINER_INCLUDES)).included
            return found

    resources = asyncio.run(served())
    assert {"container", "shipment", "transport_event", "terminal"} <= {r["type"] for r in resources}
    assert assert_rows_hold(warehouse, resources) > 1000
    # Holds and fees as lists of structs, and what they add up to.
    boxes = rows(warehouse, "SELECT holds_at_pod_terminal AS holds, fees_at_pod_terminal AS fees, has_holds, fee_total FROM containers")
    for box in boxes:
        if box["holds"] is not None:
            assert box["has_holds"] == any(h["status"] == "hold" for h in box["holds"])
        if box["fees"]:
            totals = [f["amount"] for f in box["fees"] if f["type"] == "total"]
            assert box["fee_total"] == (totals[0] if totals else sum(f["amount"] for f in box["fees"]))
    # Rail terminals share the table, told apart by `kind`; relationship ids are columns.
    assert rows(warehouse, "SELECT count(*) AS n FROM containers WHERE shipment_id IS NULL")[0]["n"] == 0

    again = pull_all(settings)
    changed = {(r.flow, t): c.inserted + c.updated for r in again for t, c in r.counts.items() if c.inserted + c.updated}
    assert not changed, changed


def container(status: str, **attributes: Any) -> dict[str, Any]:
    return {"id": "c-1", "type": "container", "attributes": {"number": "MSKU1234565", "current_status": status, **attributes}}


@pytest.mark.slow
def test_older_data_never_rolls_a_row_back(warehouse: Path) -> None:
    write_container(warehouse, container("available"), "2026-05-20T10:00:00Z")
    late = write_container(warehouse, container("on_ship"), "2026-05-19T10:00:00+00:00")  # read earlier, arrives later
    assert (late.stale, late.updated) == (1, 0)
    assert rows(warehouse, "SELECT current_status FROM containers") == [{"current_status": "available"}]
    newer = write_container(warehouse, container("picked_up"), "2026-05-21T10:00:00Z")
    assert newer.updated == 1
    # The same content seen later moves only the stamp, not the row's content or its run.
    seen = write_container(warehouse, container("picked_up"), "2026-05-22T10:00:00Z")
    assert (seen.unchanged, seen.updated) == (1, 0)
    (row,) = rows(warehouse, "SELECT current_status, observed_at FROM containers")
    assert row["current_status"] == "picked_up" and row["observed_at"].isoformat() == "2026-05-22T10:00:00+00:00"
    assert write_container(warehouse, container("available"), "2026-05-21T12:00:00Z").stale == 1


def test_odd_members_never_fail_a_load_and_are_kept(warehouse: Path) -> None:
    odd = container(
        "a_status_nobody_knew",
        equipment_length="forty",
        holds_at_pod_terminal=["customs"],  # strings where structs are declared
        fees_at_pod_terminal=[{"type": "demurrage", "amount": "12,50"}],
        pickup_lfd="not a date",
        brand_new={"x": 1},
        available_for_pickup=None,
    )
    odd["relationships"] = {"shipment": {"data": [{"type": "shipment", "id": "s-1"}]}, "pod_terminal": "odd"}
    write_container(warehouse, odd, "2026-05-20T10:00:00Z")
    (row,) = rows(warehouse, "SELECT * FROM containers")
    assert row["current_status"] == "a_status_nobody_knew"  # an unknown enum value is kept as text
    assert row["equipment_length"] is None and row["holds_at_pod_terminal"] is None and row["pickup_lfd"] is None
    assert row["has_holds"] is None and row["shipment_id"] is None
    leftovers = orjson.loads(row["leftovers"])
    assert leftovers["attributes"] == {
        "equipment_length": "forty",
        "holds_at_pod_terminal": ["customs"],
        "fees_at_pod_terminal": [{"type": "demurrage", "amount": "12,50"}],
        "pickup_lfd": "not a date",
        "brand_new": {"x": 1},
    }
    assert leftovers["relationships"] == {"shipment": {"data": [{"type": "shipment", "id": "s-1"}]}, "pod_terminal": "odd"}


@pytest.mark.slow
def test_fees_that_overflow_a_sum_give_no_total_rather_than_infinity(warehouse: Path) -> None:
    huge = [{"type": "demurrage", "amount": 1.79e308}, {"type": "storage", "amount": 1.79e308}]
    write_container(warehouse, container("available", fees_at_pod_terminal=huge), "2026-05-20T10:00:00Z")
    (row,) = rows(warehouse, "SELECT fee_total, fees_at_pod_terminal AS fees, leftovers FROM containers")
    assert row["fee_total"] is None and [f["amount"] for f in row["fees"]] == [1.79e308, 1.79e308] and row["leftovers"] is None
    fine = [{"type": "demurrage", "amount": 150.5}, {"type": "storage", "amount": 49.5}]
    write_container(warehouse, container("available", fees_at_pod_terminal=fine), "2026-05-21T10:00:00Z")
    assert rows(warehouse, "SELECT fee_total FROM containers") == [{"fee_total": 200.0}]
