"""Bulk applies against the sandbox: tag hundreds of containers, re-run sends nothing, errors are
explained per row and column, bad headers write nothing, undo restores, unknown outcomes reconcile."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from shipsync.bulk.apply import apply_file
from shipsync.bulk.undo import undo_run
from shipsync.config import Settings
from shipsync.errors import InputError
from shipsync.pull.documents import pull_documents
from support.lake import analyst
from support.sandboxes import K1, RunningSandbox, SandboxFactory, pulled_sandbox, service_values, settings_for, shipsync_env
from support.warehouse_rows import container_numbers


def write_csv(path: Path, rows: list[list[str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as out:
        csv.writer(out).writerows(rows)
    return path


@pytest.mark.slow
def test_wide_file_tags_hundreds_of_containers_then_rerun_sends_nothing_then_undo(
    make_sandbox: SandboxFactory, warehouse: Path, tmp_path: Path
) -> None:
    sandbox, settings = pulled_sandbox(make_sandbox(documents=200), warehouse)
    numbers = container_numbers(settings.warehouse, 150)
    assert len(numbers) == 150
    rows = [["Container Number", "PO Number", "Priority", "Hazardous", "Handling Flags"]]
    rows += [
        [n, f"PO-{i:04d}", ["low", "High", "urgent"][i % 3], ["yes", "no"][i % 2], "fragile; oversized" if i % 5 == 0 else ""]
        for i, n in enumerate(numbers)
    ]
    file = write_csv(tmp_path / "tags.csv", rows)
    before = dict(service_values(sandbox))

    dry = apply_file(settings, "custom-fields", file, dry_run=True)
    assert dry.counts["planned"] == 150 * 3 + 30 and service_values(sandbox) == before

    first = apply_file(settings, "custom-fields", file)
    assert first.counts["applied"] == 480 and not first.problems, (first.counts, [c for c in first.changes if c.status != "applied"])
    after = service_values(sandbox)
    container_id = next(cid for (cid, slug), v in after.items() if slug == "handling_flags")
    assert after[(container_id, "handling_flags")] == ["fragile", "oversized"]
    assert sum(1 for (_, slug), v in after.items() if slug == "priority" and v == "high") == 50

    requests_before = sum(sandbox.state.status_counts.values())
    again = apply_file(settings, "custom-fields", file)
    assert again.writes == 0 and again.counts["unchanged"] == 480
    # The re-run only reads (the refresh of current values): no POST, PATCH or DELETE reached the service.
    assert sum(sandbox.state.status_counts.values()) - requests_before == again.requests
    assert service_values(sandbox) == after

    undo = undo_run(settings, first.run_id)
    assert undo.counts["applied"] == 480
    assert service_values(sandbox) == before
    with pytest.raises(InputError, match="already undone"):
        undo_run(settings, first.run_id)


@pytest.mark.slow
def test_mixed_errors_apply_good_rows_and_explain_bad_ones(pulled: tuple[RunningSandbox, Settings], tmp_path: Path) -> None:
    _, settings = pulled
    good, bad, half = container_numbers(settings.warehouse, 3)
    rows = [
        ["container_number", "po_number", "priority", "declared_value", "customs_cleared_on"],
        [good, "PO-1", "high", "1,250.00", "03/15/2026"],
        [bad, "po 1", "rush", "lots", "31/31/2026"],
        [bad, "PO-" + "9" * 30, "", "", ""],
        ["CSQU3054383", "PO-2", "", "", ""],
        [half, "PO-3", "rush", "", ""],
    ]
    report = apply_file(settings, "custom-fields", write_csv(tmp_path / "mixed.csv", rows))
    assert report.counts["applied"] == 5
    reasons = {(p.row, p.column): p.reason for p in report.problems}
    assert "pattern" in reasons[(3, "po_number")] and "not an option" in reasons[(3, "priority")]
    assert "not a number" in reasons[(3, "declared_value")] and "not a date" in reasons[(3, "customs_cleared_on")]
    assert "too long" in reasons[(4, "po_number")] and "not in the warehouse" in reasons[(5, "container_number")]
    results = list(csv.DictReader((tmp_path / "mixed.csv.custom-fields.results.csv").open(encoding="utf-8-sig")))
    assert [r["status"] for r in results] == ["applied", "rejected", "rejected", "rejected", "partly applied"]
    assert results[4]["detail"].startswith("not applied: priority;") and "po_number: create applied" in results[4]["detail"]
    assert "priority" in results[1]["detail"] and "too long" in results[2]["detail"]
    con = analyst(settings.warehouse)
    stored = con.execute("SELECT status, count(*) FROM bulk_results WHERE run_id = ? GROUP BY 1", [report.run_id]).fetchall()
    con.close()
    assert dict(stored) == {"applied": 5, "rejected": 7}


@pytest.mark.parametrize(
    ("header", "message"),
    [
        (["container_number", "no_such_slug"], "no_such_slug"),
        (["po_number"], "no key column"),
        (["container_number", "container_id", "po_number"], "more than one key column"),
    ],
)
def test_bad_header_writes_nothing(pulled: tuple[RunningSandbox, Settings], tmp_path: Path, header: list[str], message: str) -> None:
    sandbox, settings = pulled
    number = container_numbers(settings.warehouse, 1)[0]
    file = write_csv(tmp_path / "bad.csv", [header, [number] + ["x"] * (len(header) - 1)])
    with pytest.raises(InputError, match=message):
        apply_file(settings, "custom-fields", file)
    assert service_values(sandbox) == {}
    assert not list(tmp_path.glob("bad.csv.*results.csv"))


@pytest.mark.slow
def test_unknown_outcomes_are_reconciled_without_duplicates(make_sandbox: SandboxFactory, warehouse: Path, tmp_path: Path) -> None:
    sandbox = make_sandbox(documents=60, seed=4)
    settings = settings_for(sandbox, warehouse, max_retries=8)
    pull_documents(settings, all_documents=True)
    numbers = container_numbers(warehouse, 40)
    file = write_csv(tmp_path / "po.csv", [["container_number", "po_number"]] + [[n, f"PO-{i}"] for i, n in enumerate(numbers)])
    sandbox.app.state.options = type(sandbox.app.state.options)(**{**sandbox.app.state.options.__dict__, "fault_rate": 0.3})
    first = apply_file(settings, "custom-fields", file)
    assert first.counts["unknown"] + first.counts["failed"] > 0  # the faults did bite
    sandbox.app.state.options = type(sandbox.app.state.options)(**{**sandbox.app.state.options.__dict__, "fault_rate": 0.0})
    second = apply_file(settings, "custom-fields", file)
    assert second.counts["failed"] == second.counts["unknown"] == 0
    values = service_values(sandbox)
    assert len(values) == 40 and sorted(v for v in values.values()) == sorted(f"PO-{i}" for i in range(40))
    assert len(sandbox.state.world.accounts[K1].custom_fields) == 40  # never two values for one field


@pytest.mark.slow
def test_tracking_requests_edit_the_shipment_tags_and_the_request_ref_number(
    pulled: tuple[RunningSandbox, Settings], tmp_path: Path
) -> None:
    sandbox, settings = pulled
    account = sandbox.state.world.accounts[K1]
    target = next(
        tr for tr in account.tracking_requests.values() if tr["relationships"]["tracked_object"]["data"]
    )  # pending and failed ones track none
    shipment = account.resource("shipment", target["relationships"]["tracked_object"]["data"]["id"])
    assert shipment is not None
    # Tagged in the app after the last pull: a tags_add must keep it, not overwrite it.
    shipment["attributes"]["tags"] = ["seeded", "from-the-app"]
    original_refs = list(shipment["attributes"]["ref_numbers"])
    number = target["attributes"]["request_number"]
    rows = [
        ["Request Number", "tags_add", "tags_remove", "ref_numbers_add", "ref_number"],
        [number, "vip", "seeded", "A | B", "REQ-1"],
        ["NOPE-1", "x", "", "", ""],
        [number.lower(), "", "", "", "REQ-2"],
    ]
    report = apply_file(settings, "tracking-requests", write_csv(tmp_path / "tr.csv", rows))
    assert report.counts["applied"] == 3  # the shipment's tags and ref_numbers, the request's ref_number
    assert shipment["attributes"]["tags"] == ["from-the-app", "vip"]
    # The request's ref_number joins its shipment's reference numbers (the answers carry no `ref_number`).
    assert shipment["attributes"]["ref_numbers"] == [*original_refs, "A", "B", "REQ-1"]
    assert {(p.row, p.column) for p in report.problems} == {(3, "request_number"), (4, "request_number")}
    con = analyst(settings.warehouse)
    stored = con.execute("SELECT tags, ref_numbers FROM tracking_requests WHERE id = ?", [target["id"]]).fetchone()
    con.close()
    assert stored == (["from-the-app", "vip"], [*original_refs, "A", "B", "REQ-1"])
    assert apply_file(settings, "tracking-requests", tmp_path / "tr.csv").writes == 0  # REQ-1 is shown: not sent again
    shipment["attributes"]["tags"] = [*shipment["attributes"]["tags"], "later"]  # someone else, after the run
    undo = undo_run(settings, report.run_id)
    assert undo.counts["applied"] == 3
    assert shipment["attributes"]["tags"] == ["from-the-app", "later", "seeded"]  # ours taken back, theirs kept
    assert shipment["attributes"]["ref_numbers"] == original_refs  # REQ-1 taken out of them, never a null sent


def test_tracking_request_columns_the_api_cannot_change_reject_the_file(pulled: tuple[RunningSandbox, Settings], tmp_path: Path) -> None:
    sandbox, settings = pulled
    number = next(iter(sandbox.state.world.accounts[K1].tracking_requests.values()))["attributes"]["request_number"]
    file = write_csv(tmp_path / "old.csv", [["request_number", "tags", "scac", "customer_id"], [number, "x", "MSCU", "p-1"]])
    with pytest.raises(InputError, match=r"scac, customer_id cannot be changed through the service's API"):
        apply_file(settings, "tracking-requests", file)
    assert not list(tmp_path.glob("old.csv.*results.csv"))


@pytest.mark.slow
def test_definitions_with_options_then_values_using_them(pulled: tuple[RunningSandbox, Settings], tmp_path: Path) -> None:
    sandbox, settings = pulled
    rows = [
        ["entity_type", "api_slug", "display_name", "data_type", "options", "max_length"],
        ["Cargo", "broker", "Broker", "enum", "acme; globex", ""],  # the spec's name: sent as Container
        ["Cargo", "seal_number", "Seal", "short_text", "", "12"],
        ["Boat", "x", "X", "short_text", "", ""],
    ]
    report = apply_file(settings, "custom-field-definitions", write_csv(tmp_path / "defs.csv", rows))
    assert report.counts["applied"] == 2 and report.problems[0].column == "entity_type"
    assert apply_file(settings, "custom-field-definitions", tmp_path / "defs.csv").writes == 0
    number = container_numbers(settings.warehouse, 1)[0]
    values = apply_file(
        settings,
        "custom-fields",
        write_csv(tmp_path / "v.csv", [["container_number", "broker", "seal_number"], [number, "Globex", "SEAL-1"]]),
    )
    assert values.counts["applied"] == 2 and "globex" in service_values(sandbox).values()


@pytest.mark.slow
def test_apply_killed_mid_run_then_rerun_applies_each_change_once(make_sandbox: SandboxFactory, warehouse: Path, tmp_path: Path) -> None:
    sandbox = make_sandbox(documents=120, seed=5)
    settings = settings_for(sandbox, warehouse)
    pull_documents(settings, all_documents=True)
    numbers = container_numbers(warehouse, 100)
    rows = [["container_number", "po_number", "priority"]] + [[n, f"PO-{i}", ["low", "high"][i % 2]] for i, n in enumerate(numbers)]
    file = write_csv(tmp_path / "tags.csv", rows)
    sandbox.app.state.options = type(sandbox.app.state.options)(**{**sandbox.app.state.options.__dict__, "latency_ms": 25.0})
    env = {**os.environ, **shipsync_env(sandbox.api_url, warehouse), "PREFECT_SERVER_ANALYTICS_ENABLED": "false"}
    apply = subprocess.Popen(
        [sys.executable, "-m", "shipsync", "apply", "custom-fields", str(file)], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    account = sandbox.state.world.accounts[K1]
    # Generous: on a loaded machine the child's imports alone can take most of a minute; the loop
    # ends as soon as 40 values are in.
    deadline = time.monotonic() + 300
    while len(account.custom_fields) < 40 and apply.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    apply.send_signal(signal.SIGKILL)
    apply.wait()
    written = len(account.custom_fields)
    output = apply.stdout.read().decode(errors="replace") if apply.stdout else ""
    assert 0 < written < 200, f"the kill should land mid-run, {written} of 200 values were written; apply said: {output[-2000:]}"

    with analyst(warehouse) as con:  # the killed run committed nothing, and left nothing that blocks
        assert con.execute("SELECT count(*) FROM sync_runs WHERE flow = 'apply_custom_fields'").fetchone() == (0,)
    sandbox.app.state.options = type(sandbox.app.state.options)(**{**sandbox.app.state.options.__dict__, "latency_ms": 0.0})
    rerun = apply_file(settings, "custom-fields", file)
    assert rerun.counts["failed"] == rerun.counts["unknown"] == 0 and not rerun.problems
    assert rerun.counts["applied"] + rerun.counts["unchanged"] == 200
    assert rerun.counts["unchanged"] >= written  # what the killed run wrote is not sent again
    values = service_values(sandbox)
    assert len(account.custom_fields) == 200  # never two values for one field
    assert sorted(v for (_, slug), v in values.items() if slug == "po_number") == sorted(f"PO-{i}" for i in range(100))
    assert apply_file(settings, "custom-fields", file).writes == 0


@pytest.mark.slow
def test_a_million_row_file_is_checked_row_by_row_without_loss(make_sandbox: SandboxFactory, warehouse: Path, tmp_path: Path) -> None:
    sandbox = make_sandbox(documents=20)
    settings = settings_for(sandbox, warehouse)
    pull_documents(settings, all_documents=True)
    known = container_numbers(warehouse, 1)[0]
    file = tmp_path / "million.csv"
    with file.open("w", newline="") as out:
        out.write("container_number,po_number\n")
        out.write(f"{known},PO-REAL\n")
        out.writelines(f"ZZZU{n:06d}0,PO-{n}\n" for n in range(999_999))  # well-formed numbers nobody tracks
    report = apply_file(settings, "custom-fields", file, dry_run=True)
    assert report.counts["planned"] == 1 and report.counts["rejected"] == 999_999
    assert len(report.problems) == 999_999 and report.problems[-1].row == 1_000_001
    with (tmp_path / "million.csv.custom-fields.dry-run.results.csv").open() as results:
        assert sum(1 for _ in results) == 1 + 1_000_000  # a header and one line per row: nothing dropped
    assert service_values(sandbox) == {}  # a dry run writes nothing
