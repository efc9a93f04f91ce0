"""The analyst views answer their questions on boxes whose answers are known."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from shipsync.warehouse.pickup_risk import pickup_risk_lines
from support.analyst_world import world
from support.lake import analyst
from support.warehouse_rows import rows


@pytest.mark.slow
def test_views_answer_the_analysts_questions(warehouse: Path) -> None:
    world(warehouse)
    status = {r["container_number"]: r for r in rows(warehouse, "SELECT * FROM container_status")}
    assert status["MSKU0000001"]["days_until_lfd"] == 1 and status["MSKU0000001"]["pod_terminal"] == "Pier 400"
    assert status["MSKU0000001"]["last_milestone"] == "container.transport.vessel_discharged"
    assert status["MSKU0000002"]["holds"] == ["customs"] and status["MSKU0000002"]["bill_of_lading"] == "MAEU1"

    risk = {r["container_number"]: r["risk"] for r in rows(warehouse, "SELECT * FROM pickup_risk")}
    assert risk == {"MSKU0000001": "last free day in 1 days", "MSKU0000002": "last free day passed 2 days ago; on hold: customs"}
    wider = rows(
        warehouse, "SELECT container_number FROM containers_awaiting_pickup WHERE days_until_lfd <= 10 OR has_holds ORDER BY days_until_lfd"
    )
    assert [r["container_number"] for r in wider] == ["MSKU0000002", "MSKU0000001", "MSKU0000003"]

    (dwell,) = rows(warehouse, "SELECT * FROM port_dwell")
    assert (dwell["pod_locode"], dwell["terminal"], dwell["carrier"]) == ("USLAX", "Pier 400", "MAEU")
    assert (dwell["containers"], dwell["avg_dwell_days"], dwell["still_in"]) == (1, 2.5, 3)

    (eta,) = rows(warehouse, "SELECT * FROM eta_changes")
    assert (eta["slip_days"], eta["estimates"]) == (3.0, 1)

    timeline = rows(warehouse, "SELECT source, event, container_number FROM shipment_timeline ORDER BY event_at, event")
    assert [r["event"] for r in timeline] == [
        "departed",
        "original estimated arrival",
        "estimated arrival",
        "shipment.estimated.arrival",
        "arrived",
        "container.transport.vessel_discharged",
    ]
    assert timeline[-1]["container_number"] == "MSKU0000001"

    con = analyst(warehouse)
    try:
        lines = pickup_risk_lines(con)
    finally:
        con.close()
    assert len(lines) == 2 and lines[0].startswith("MSKU0000002 (B/L MAEU1) at USLAX Pier 400") and str(date.today().year) in "".join(lines)
