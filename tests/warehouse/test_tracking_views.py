"""The analyst views answer their questions on boxes whose answers are known, and each column gives
what its name promises: `still_in` only boxes still at the terminal, `estimates` the estimates, a
box that went on by rail picked up (held, charged, due) at its inland ramp, days counted to an as-of."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import pytest

from shipsync_demo.show import pickup_risk_lines
from support.analyst_world import TODAY, world
from support.lake import analyst
from support.warehouse_rows import rows


@pytest.mark.slow
def test_views_answer_the_analysts_questions(warehouse: Path) -> None:
    world(warehouse)
    status = {r["container_number"]: r for r in rows(warehouse, "SELECT * FROM container_status")}
    assert status["MSKU0000001"]["days_until_lfd"] == 1 and status["MSKU0000001"]["pod_terminal"] == "Pier 400"
    assert status["MSKU0000001"]["pickup_facility"] == "Pier 400"
    assert status["MSKU0000001"]["last_milestone"] == "container.transport.vessel_discharged"
    assert status["MSKU0000002"]["holds"] == ["customs"] and status["MSKU0000002"]["bill_of_lading"] == "MAEU1"

    risk = {r["container_number"]: r["risk"] for r in rows(warehouse, "SELECT * FROM pickup_risk")}
    assert risk == {
        "MSKU0000001": "last free day tomorrow",
        "MSKU0000002": "last free day passed 2 days ago; on hold: customs",
        "MSKU0000006": "last free day in 2 days; on hold: customs",
    }
    wider = rows(
        warehouse, "SELECT container_number FROM containers_awaiting_pickup WHERE days_until_lfd <= 10 OR has_holds ORDER BY days_until_lfd"
    )
    assert [r["container_number"] for r in wider] == ["MSKU0000002", "MSKU0000001", "MSKU0000006", "MSKU0000003"]

    (dwell,) = rows(warehouse, "SELECT * FROM port_dwell")
    assert (dwell["pod_locode"], dwell["terminal"], dwell["carrier"]) == ("USLAX", "Pier 400", "MAEU")
    # Out by truck (c-4) or by rail (c-5, c-6), 2.5 days each; still in: the three at the terminal.
    assert (dwell["containers"], dwell["avg_dwell_days"], dwell["still_in"]) == (3, 2.5, 3)

    (eta,) = rows(warehouse, "SELECT * FROM eta_changes")
    assert eta["slip_days"] == 3.0

    timeline = rows(warehouse, "SELECT source, event, container_number FROM shipment_timeline ORDER BY event_at, event")
    assert [r["event"] for r in timeline] == [
        "departed",
        "original estimated arrival",
        "container.transport.estimated.vessel_arrived",
        "estimated arrival",
        "shipment.estimated.arrival",
        "arrived",
        "shipment.estimated.arrival",
        "container.transport.vessel_discharged",
    ]
    assert timeline[-1]["container_number"] == "MSKU0000001"

    con = analyst(warehouse)
    try:
        lines = pickup_risk_lines(con)
    finally:
        con.close()
    assert len(lines) == 3 and lines[0].startswith("MSKU0000002 (B/L MAEU1) at USLAX Pier 400") and str(date.today().year) in "".join(lines)
    assert lines[2].startswith("MSKU0000006 (B/L MAEU1) at USLAX Joliet Ramp")


def test_still_in_counts_only_boxes_still_at_the_terminal(warehouse: Path) -> None:
    world(warehouse)
    (dwell,) = rows(warehouse, "SELECT still_in FROM port_dwell")
    in_yard = rows(
        warehouse,
        "SELECT number FROM containers WHERE pod_discharged_at IS NOT NULL AND pod_full_out_at IS NULL "
        "AND current_status NOT IN ('picked_up', 'empty_returned') AND ind_rail_unloaded_at IS NULL ORDER BY 1",
    )
    assert dwell["still_in"] == len(in_yard) == 3  # not the box back empty from the ramp, nor the one waiting there


def test_estimates_are_the_estimates_each_once(warehouse: Path) -> None:
    world(warehouse)
    (eta,) = rows(
        warehouse, "SELECT estimates, estimate_count, earliest_estimated_arrival, latest_estimated_arrival, last_estimate FROM eta_changes"
    )
    made = [(e["made_at"].date(), e["estimated_arrival"].date()) for e in eta["estimates"]]
    day = TODAY.date()
    assert made == [(day - timedelta(days=20), day - timedelta(days=10)), (day - timedelta(days=15), day - timedelta(days=9))]
    assert eta["estimate_count"] == 2 and eta["last_estimate"].date() == day - timedelta(days=9)
    assert (eta["earliest_estimated_arrival"].date(), eta["latest_estimated_arrival"].date()) == (
        day - timedelta(days=10),
        day - timedelta(days=9),
    )


def test_a_box_that_went_on_by_rail_is_due_held_and_charged_at_its_ramp(warehouse: Path) -> None:
    world(warehouse)
    (box,) = rows(warehouse, "SELECT * FROM container_status WHERE container_number = 'MSKU0000006'")
    assert (box["pickup_facility"], box["days_until_lfd"], box["has_holds"], box["holds"], box["fee_total"]) == (
        "Joliet Ramp",
        2,
        True,
        ["customs"],
        150.0,
    )
    assert box["pod_terminal"] == "Pier 400"


def test_days_count_to_the_as_of_when_one_is_set(warehouse: Path) -> None:
    world(warehouse)
    con = analyst(warehouse)
    try:
        con.execute("SET VARIABLE as_of = ?", [TODAY.date() - timedelta(days=3)])
        query = "SELECT days_until_lfd FROM containers_awaiting_pickup WHERE container_number = 'MSKU0000001'"
        (due,) = con.execute(query).fetchone() or (None,)
        con.execute("RESET VARIABLE as_of")
        (today,) = con.execute(query).fetchone() or (None,)
    finally:
        con.close()
    assert (due, today) == (4, 1)
