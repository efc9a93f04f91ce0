"""The views the report reads, on boxes whose answers are known (`support.analyst_world`): a
deadline is counted only for a box still where it is picked up, and "at the port terminal" is only
a box still in the port's yard, never one gone by truck or rail, nor one returned."""

from __future__ import annotations

from pathlib import Path

from support.analyst_world import world
from support.warehouse_rows import rows


def test_days_until_lfd_is_empty_once_the_box_has_left(warehouse: Path) -> None:
    """A box picked up (c-4) or back empty from its inland ramp (c-5) has no days left: a filter
    `days_until_lfd <= 3` flagged boxes long gone."""
    world(warehouse)
    status = {r["container_number"]: r for r in rows(warehouse, "SELECT * FROM container_status")}
    days = {number: row["days_until_lfd"] for number, row in status.items()}
    assert days == {"MSKU0000001": 1, "MSKU0000002": -2, "MSKU0000003": 10, "MSKU0000004": None, "MSKU0000005": None, "MSKU0000006": 2}
    assert status["MSKU0000004"]["last_free_day"] is not None  # the day itself stays known
    flagged = rows(warehouse, "SELECT container_number FROM container_pickup WHERE days_until_lfd <= 3 ORDER BY 1")
    assert [r["container_number"] for r in flagged] == ["MSKU0000001", "MSKU0000002", "MSKU0000006"]


def test_at_the_port_terminal_is_only_a_box_still_in_the_yard(warehouse: Path) -> None:
    """Out by truck (c-4), gone by rail and back empty (c-5), at the inland ramp (c-6): not at the port."""
    world(warehouse)
    at_port = rows(warehouse, "SELECT container_number FROM container_pickup WHERE at_port_terminal ORDER BY 1")
    assert [r["container_number"] for r in at_port] == ["MSKU0000001", "MSKU0000002", "MSKU0000003"]
    (ramp,) = rows(
        warehouse, "SELECT inland_facility, pod_terminal, fee_currency FROM container_pickup WHERE container_number = 'MSKU0000006'"
    )
    assert (ramp["inland_facility"], ramp["pod_terminal"], ramp["fee_currency"]) == ("Joliet Ramp", "Pier 400", "USD")
