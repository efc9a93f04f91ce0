"""Spreadsheets against shapes the service's reference allows: lists it may send as null, and the
members a tracking request's create takes beyond the number (a named container's staged values,
a customer)."""

from __future__ import annotations

import csv
from pathlib import Path

from shipsync.bulk.apply import apply_file
from shipsync.bulk.undo import undo_run
from shipsync.config import Settings
from support.sandboxes import K1, RunningSandbox, SandboxFactory, settings_for


def write_csv(path: Path, table: list[list[str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as out:
        csv.writer(out).writerows(table)
    return path


def test_a_shipment_whose_ref_numbers_are_null_takes_a_tracking_edit(pulled: tuple[RunningSandbox, Settings], tmp_path: Path) -> None:
    sandbox, settings = pulled
    account = sandbox.state.world.accounts[K1]
    request = next(tr for tr in account.tracking_requests.values() if (tr["relationships"]["tracked_object"] or {}).get("data"))
    shipment = account.resource("shipment", request["relationships"]["tracked_object"]["data"]["id"])
    assert shipment is not None
    shipment["attributes"]["ref_numbers"] = None  # nullable in the reference, and null in its own example
    number = request["attributes"]["request_number"]
    report = apply_file(
        settings, "tracking-requests", write_csv(tmp_path / "refs.csv", [["request_number", "ref_numbers_add"], [number, "PO-9"]])
    )
    assert not report.problems, [p.describe() for p in report.problems]
    assert report.counts["applied"] == 1 and shipment["attributes"]["ref_numbers"] == ["PO-9"]
    undone = undo_run(settings, report.run_id)
    assert undone.counts["applied"] == 1 and shipment["attributes"]["ref_numbers"] == []


def test_new_tracking_names_a_customer_and_stages_values_on_one_named_container(
    make_sandbox: SandboxFactory, warehouse: Path, tmp_path: Path
) -> None:
    sandbox = make_sandbox(tracking_delay_s=3600)  # the requests stay pending: what they staged is still there to see
    settings = settings_for(sandbox, warehouse)
    account = sandbox.state.world.accounts[K1]
    parties = {p["attributes"]["company_name"]: p["id"] for p in account.parties.values()}
    box = "MSKU9070323"
    rows = [
        ["request_type", "request_number", "scac", "customer", "container_number", "container.priority"],
        ["bill_of_lading", "MAEU240187365", "MAEU", "globex logistics", "msku 907032-3", "high"],  # by name, any case
        ["bill_of_lading", "MAEU240187366", "MAEU", parties["Stark Freight"], "", "low"],  # by id; every container
        ["bill_of_lading", "MAEU240187367", "MAEU", "Globex Logistix", "", ""],
        ["bill_of_lading", "MAEU240187368", "MAEU", "", box, ""],  # a container, and no value for it
    ]
    report = apply_file(settings, "new-tracking", write_csv(tmp_path / "start.csv", rows))
    reasons = {p.row: p.reason for p in report.problems}
    assert reasons == {
        4: "no party (customer) is named 'Globex Logistix' (did you mean Globex Logistics?)",
        5: "names the container for the row's container.SLUG values, and the row has none",
    }
    made = {c.row: account.tracking_requests[c.entity_id] for c in report.changes if c.status == "applied"}
    assert made[2]["relationships"]["customer"]["data"] == {"type": "party", "id": parties["Globex Logistics"]}
    assert made[3]["relationships"]["customer"]["data"] == {"type": "party", "id": parties["Stark Freight"]}
    assert account.staged[made[2]["id"]].container_fields == (("priority", "high", "MSKU9070323"),)  # `containers[].number`
    assert account.staged[made[3]["id"]].container_fields == (("priority", "low", ""),)
    detail = next(c for c in report.changes if c.row == 2)
    assert ("customer", "globex logistics", parties["Globex Logistics"]) in detail.readings
    assert ("container_number", "msku 907032-3", "MSKU9070323") in detail.readings
