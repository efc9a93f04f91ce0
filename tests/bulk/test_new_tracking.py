"""`shipsync apply new-tracking`: start tracking from a spreadsheet against the sandbox. Dry run
sends nothing; numbers already tracked are skipped; refusals carry the service's message and what
it reads the number as; carrier detection settles through a pull, and the results table says how;
a re-run of the same file creates nothing new."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from shipsync.bulk.apply import apply_file
from shipsync.errors import InputError
from shipsync.pull.tracking_requests import pull_tracking_requests
from shipsync_sandbox.views import tracking_request_view
from support.sandboxes import K1, SandboxFactory, settings_for
from support.waiting import wait_for
from support.warehouse_rows import rows

SETTLES_IN = 0.2


def write_csv(path: Path, table: list[list[str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as out:
        csv.writer(out).writerows(table)
    return path


def outcomes(results: Path) -> dict[str, tuple[str, str]]:
    with results.open(encoding="utf-8-sig", newline="") as handle:
        return {r["request_number"]: (r["status"], r["detail"]) for r in csv.DictReader(handle)}


@pytest.mark.slow
def test_new_tracking_creates_once_explains_refusals_and_follows_detection(
    make_sandbox: SandboxFactory, warehouse: Path, tmp_path: Path
) -> None:
    sandbox = make_sandbox(tracking_delay_s=SETTLES_IN)
    settings = settings_for(sandbox, warehouse)
    account = sandbox.state.world.accounts[K1]
    # A request still tracking (one whose shipment stopped shows `tracking_stopped`: no longer active).
    tracked = next(t for t in account.tracking_requests.values() if tracking_request_view(account, t)["attributes"]["status"] == "created")
    tracked_number = tracked["attributes"]["request_number"]
    file = write_csv(
        tmp_path / "start.csv",
        [
            ["request_type", "request_number", "scac", "ref_numbers", "shipment_tags", "shipment.consignee", "container.priority"],
            ["Bill of lading", "MAEU987654321", "MAEU", "PO-77; PO-78", "camembert", "Globex", "high"],
            ["bill_of_lading", "HLCU123456789", "", "", "", "", ""],  # carrier detected: created
            ["booking", "123456789", "", "", "", "", ""],  # carrier detection fails
            ["bill_of_lading", "ZZQQ12345", "ZZZZ", "", "", "", ""],  # no such carrier: refused
            [tracked["attributes"]["request_type"], tracked_number, tracked["attributes"]["scac"] or "", "", "", "", ""],
            ["parcel", "X1", "", "", "", "", ""],
        ],
    )
    before = len(account.tracking_requests)

    dry = apply_file(settings, "new-tracking", file, dry_run=True)
    assert len(account.tracking_requests) == before
    # The unknown carrier is refused before anything is sent (the service's shipping lines say so).
    assert dry.counts["planned"] == 3 and dry.counts["unchanged"] == 1 and [p.column for p in dry.problems] == ["scac", "request_type"]

    first = apply_file(settings, "new-tracking", file)
    assert len(account.tracking_requests) == before + 3
    assert first.results_file is not None
    seen = outcomes(first.results_file)
    assert seen["MAEU987654321"][0] == "applied"
    assert seen["HLCU123456789"][0] == "applied" and "pending" in seen["HLCU123456789"][1]
    status, detail = seen["ZZQQ12345"]
    assert status == "rejected" and "no shipping line the service tracks with has the SCAC ZZZZ" in detail
    assert seen[tracked_number][0] == "unchanged" and f"already tracked by tracking request {tracked['id']}" in seen[tracked_number][1]
    made = [
        t
        for t in account.tracking_requests.values()
        if t["attributes"]["request_number"] in ("MAEU987654321", "HLCU123456789", "123456789")
    ]
    assert len(made) == 3
    wait_for(lambda: all(t["attributes"]["status"] != "pending" for t in made), "the sandbox to settle the new requests")
    pull_tracking_requests(settings)
    created = next(t for t in account.tracking_requests.values() if t["attributes"]["request_number"] == "MAEU987654321")
    shipment_id = created["relationships"]["tracked_object"]["data"]["id"]
    values = {
        (cf["relationships"]["entity"]["data"]["id"], cf["attributes"]["api_slug"]): cf["attributes"]["value"]
        for cf in account.custom_fields.values()
    }
    assert values[(shipment_id, "consignee")] == "Globex"  # staged by the row's shipment.consignee
    settled = rows(
        warehouse,
        "SELECT tr.request_number, tr.status FROM bulk_results r JOIN tracking_requests tr ON tr.id = r.entity_id "
        f"WHERE r.run_id = '{first.run_id}' AND r.action = 'create' ORDER BY 1",
    )
    assert {r["request_number"]: r["status"] for r in settled} == {
        "123456789": "failed",
        "HLCU123456789": "created",
        "MAEU987654321": "created",
    }

    again = apply_file(settings, "new-tracking", file)
    assert again.counts["applied"] == 0 and again.writes == 0  # nothing new is created, nothing is sent
    assert len(account.tracking_requests) == before + 3
    assert again.results_file is not None
    seen = outcomes(again.results_file)
    assert seen["HLCU123456789"][0] == "unchanged" and "(created)" in seen["HLCU123456789"][1]
    assert seen["123456789"][0] == "rejected" and "scac_auto_detect_failed" in seen["123456789"][1]


def test_new_tracking_refuses_a_field_column_the_account_has_not_defined(
    make_sandbox: SandboxFactory, warehouse: Path, tmp_path: Path
) -> None:
    settings = settings_for(make_sandbox(documents=5), warehouse)
    file = write_csv(tmp_path / "start.csv", [["request_type", "request_number", "shipment.no_such_field"], ["container", "X", "1"]])
    with pytest.raises(InputError, match=r"column shipment.no_such_field: the account has no custom field definition"):
        apply_file(settings, "new-tracking", file, dry_run=True)
    wrong_entity = write_csv(tmp_path / "wrong.csv", [["request_type", "request_number", "shipment.po_number"], ["container", "X", "1"]])
    with pytest.raises(InputError, match=r"'po_number' is a field of the container, not the shipment"):
        apply_file(settings, "new-tracking", wrong_entity, dry_run=True)


def test_a_row_the_service_refuses_says_why_and_what_it_reads_the_number_as(
    make_sandbox: SandboxFactory, warehouse: Path, tmp_path: Path
) -> None:
    sandbox = make_sandbox(documents=5)
    sandbox.state.world.shipping_lines.clear()  # a service whose listing says nothing: only the create can tell
    settings = settings_for(sandbox, warehouse)
    file = write_csv(tmp_path / "start.csv", [["request_type", "request_number", "scac"], ["bill_of_lading", "ZZQQ12345", "ZZZZ"]])
    report = apply_file(settings, "new-tracking", file)
    assert report.results_file is not None
    status, detail = outcomes(report.results_file)["ZZQQ12345"]
    assert status == "failed" and "/data/attributes/scac" in detail and "the service reads 'ZZQQ12345' as a" in detail
