"""Spreadsheets against shapes the service's reference allows: lists it may send as null, and the
members a tracking request's create takes beyond the number (a named container's staged values,
a customer)."""

from __future__ import annotations

import csv
from pathlib import Path

from shipsync.bulk.apply import apply_file
from shipsync.bulk.undo import undo_run
from shipsync.config import Settings
from support.sandboxes import K1, RunningSandbox


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
