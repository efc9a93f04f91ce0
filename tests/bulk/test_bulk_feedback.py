"""Feedback that teaches (issue 37 item 2): every cell's result says what was read and what was
sent, in the results file, `bulk_results` and the terminal; a date is read in exactly the formats
its message names; container numbers are read however they are written; a misspelt header is named
with the one it likely means; a workbook reads the sheet with a key column and says which; stop and
resume read the state back; new-tracking checks numbers and carriers before sending. The examples
docs/spreadsheets.md shows are checked against what the code says."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from openpyxl import Workbook

from shipsync import iso6346
from shipsync.bulk.apply import apply_file
from shipsync.bulk.cells import cell_value
from shipsync.cli.apply_cmd import print_report
from shipsync.config import Settings
from shipsync.errors import InputError
from shipsync.values import FieldRules, ValueProblem
from shipsync_sandbox.routes_shipments import tracking_stopped
from shipsync_sandbox.views import shipment_view
from support.lake import analyst
from support.sandboxes import K1, RunningSandbox, settings_for
from support.warehouse_rows import container_numbers

DOCS = " ".join((Path(__file__).parents[2] / "docs" / "spreadsheets.md").read_text().split())


def documented(text: str) -> bool:
    """Whether docs/spreadsheets.md shows `text` (its line breaks aside): its examples are the code's."""
    return " ".join(text.split()) in DOCS


def write_csv(path: Path, table: list[list[str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as out:
        csv.writer(out).writerows(table)
    return path


def results(path: Path | None) -> list[dict[str, str]]:
    assert path is not None
    with path.open(encoding="utf-8-sig", newline="") as handle:
        return list(csv.DictReader(handle))


def test_each_cell_says_what_was_read_and_what_was_sent(
    pulled: tuple[RunningSandbox, Settings], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, settings = pulled
    number = container_numbers(settings.warehouse, 1)[0]
    file = write_csv(tmp_path / "boxes.csv", [["container_number", "customs_cleared_on", "priority"], [number, "15.03.2026", "High"]])

    dry = apply_file(settings, "custom-fields", file, dry_run=True)
    detail = results(dry.results_file)[0]["detail"]
    assert 'customs_cleared_on: create planned, read "15.03.2026", would send "2026-03-15"' in detail
    assert 'priority: create planned, read "High", would send "high"' in detail

    applied = apply_file(settings, "custom-fields", file)
    detail = results(applied.results_file)[0]["detail"]
    assert 'customs_cleared_on: create applied, read "15.03.2026", sent "2026-03-15"' in detail and documented(detail)
    print_report(applied)
    printed = capsys.readouterr().out
    assert 'customs_cleared_on: read "15.03.2026", sent "2026-03-15"' in printed and 'priority: read "High", sent "high"' in printed
    assert documented("\n".join(printed.splitlines()[1:4]))  # the docs' terminal example, past its first line
    with analyst(settings.warehouse) as con:
        stored = dict(con.execute("SELECT field, detail FROM bulk_results WHERE run_id = ?", [applied.run_id]).fetchall())
    assert stored["customs_cleared_on"] == 'read "15.03.2026", sent "2026-03-15"'


@pytest.mark.parametrize("default_format", [None, "MM/DD/YYYY", "DD/MM/YYYY", "YYYY-MM-DD"])
def test_a_date_is_accepted_exactly_in_the_formats_the_message_names(default_format: str | None) -> None:
    rules = FieldRules("date", default_format=default_format)
    with pytest.raises(ValueProblem) as refused:
        cell_value("31/31/2026", rules)
    named = refused.value.args[0].split("expected one of: ")[1].rstrip(")").split("; ")
    # Every format the message names reads the 15th of March 2026, written that way ...
    for name in named:
        written = MARCH_15.get(name.removesuffix(" (the field's format)"), name)
        assert cell_value(written, rules) == "2026-03-15", name
    # ... and whatever it does not name is refused.
    for written in {"2026/03/15": "YYYY/MM/DD", "15.03.2026": "DD.MM.YYYY", "03/15/2026": "MM/DD/YYYY", "15/03/2026": "DD/MM/YYYY"}.items():
        if not any(n.startswith(written[1]) for n in named):
            with pytest.raises(ValueProblem, match="not a date"):
                cell_value(written[0], rules)
    for never in ("2026.03.15", "15-03-2026", "March 15 2026", "tomorrow"):
        with pytest.raises(ValueProblem, match="not a date"):
            cell_value(never, rules)
    assert ("MM/DD/YYYY (the field's format)" in named) == (default_format == "MM/DD/YYYY")
    assert default_format != "MM/DD/YYYY" or documented(refused.value.args[0])
    assert "YYYY/MM/DD" in named  # read, so named


MARCH_15 = {
    "YYYY-MM-DD": "2026-03-15",
    "YYYY/MM/DD": "2026/03/15",
    "DD.MM.YYYY": "15.03.2026",
    "MM/DD/YYYY": "03/15/2026",
    "DD/MM/YYYY": "15/03/2026",
}


def test_a_container_number_is_read_however_it_is_written(pulled: tuple[RunningSandbox, Settings], tmp_path: Path) -> None:
    _, settings = pulled
    number = container_numbers(settings.warehouse, 1)[0]
    written = f" {number[:4].lower()} {number[4:10]}-{number[10]} "  # akpu 354575-9
    wrong = number[:10] + str((int(number[10]) + 1) % 10)
    file = write_csv(tmp_path / "boxes.csv", [["container_number", "po_number"], [written, "PO-1"], [wrong, "PO-2"]])
    report = apply_file(settings, "custom-fields", file, dry_run=True)
    assert [c.row for c in report.changes] == [2]
    (problem,) = report.problems
    assert (problem.row, problem.column) == (3, "container_number")
    assert f"its check digit is {wrong[10]}, and ISO 6346 gives {number[10]} for {number[:10]}" in problem.reason


def test_container_numbers_in_their_one_form() -> None:
    assert iso6346.normalized("akpu 354575-9") == "AKPU3545759"
    assert iso6346.problem("AKPU3545759") is None
    assert "4th letter is U, J or Z, not X" in str(iso6346.problem("AKPX3545759"))
    assert "4 letters, then 7 digits" in str(iso6346.problem("AKPU35457"))
    assert "4 letters, then 7 digits" in str(iso6346.problem("ÄKPU3545759"))


def test_a_misspelt_header_is_named_with_the_one_it_likely_means(pulled: tuple[RunningSandbox, Settings], tmp_path: Path) -> None:
    _, settings = pulled
    number = container_numbers(settings.warehouse, 1)[0]
    with pytest.raises(InputError) as refused:
        apply_file(settings, "custom-fields", write_csv(tmp_path / "a.csv", [["container_number", "prioirty"], [number, "high"]]))
    message = str(refused.value)
    assert "column(s) prioirty (did you mean priority?) name no custom field definition" in message
    assert documented("column(s) prioirty (did you mean priority?) name no custom field definition")
    assert "po_number" not in message  # not every field the account has
    assert documented("no key column (is contianer_number meant to be container_number?)")
    with pytest.raises(InputError, match=r"no key column \(is contianer_number meant to be container_number\?\)"):
        apply_file(settings, "custom-fields", write_csv(tmp_path / "b.csv", [["contianer_number", "priority"], [number, "high"]]))
    with pytest.raises(InputError, match=r"the account has no custom field definition 'consigne' \(did you mean shipment.consignee\?\)"):
        start = [["request_type", "request_number", "shipment.consigne"], ["bill_of_lading", "MAEU987654321", "Globex"]]
        apply_file(settings, "new-tracking", write_csv(tmp_path / "c.csv", start), dry_run=True)
    with pytest.raises(InputError, match=r"unknown column\(s\) shipment_tag \(did you mean shipment_tags\?\)"):
        start = [["request_type", "request_number", "shipment_tag"], ["bill_of_lading", "MAEU987654321", "x"]]
        apply_file(settings, "new-tracking", write_csv(tmp_path / "d.csv", start), dry_run=True)
    with pytest.raises(InputError, match=r"unknown column\(s\) tags_ad \(did you mean tags_add\?\)"):
        apply_file(settings, "tracking-requests", write_csv(tmp_path / "e.csv", [["request_number", "tags_ad"], ["X", "y"]]))


def workbook(path: Path, sheets: dict[str, list[list[object]]]) -> Path:
    book = Workbook()
    assert book.active is not None
    book.remove(book.active)
    for name, rows in sheets.items():
        sheet = book.create_sheet(name)
        for row in rows:
            sheet.append(row)
    book.save(path)
    return path


def test_a_workbook_reads_the_sheet_with_a_key_column_and_says_which(
    pulled: tuple[RunningSandbox, Settings], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, settings = pulled
    number = container_numbers(settings.warehouse, 1)[0]
    readme = [["How to fill this in"], ["One row per container"]]
    book = workbook(tmp_path / "tags.xlsx", {"Readme": readme, "Boxes": [["Container Number", "PO Number"], [number, "PO-1"]]})
    report = apply_file(settings, "custom-fields", book, dry_run=True)
    assert report.counts["planned"] == 1 and report.sheet == ("Boxes", "the only one of its 2 sheets (Readme, Boxes) with a key column")
    print_report(report)
    said = "read sheet 'Boxes' of tags.xlsx: the only one of its 2 sheets (Readme, Boxes) with a key column"
    assert said in capsys.readouterr().out and documented(said)

    none = workbook(tmp_path / "none.xlsx", {"Readme": readme, "Notes": [["po_number"], ["PO-1"]]})
    with pytest.raises(InputError) as refused:
        apply_file(settings, "custom-fields", none, dry_run=True)
    assert "no sheet holds a spreadsheet of this kind ('Readme': no key column" in str(refused.value)
    assert "'Notes': no key column" in str(refused.value) and "name the sheet with --sheet" in str(refused.value)

    boxes = [["container_number", "po_number"], [number, "PO-1"]]
    both = workbook(tmp_path / "both.xlsx", {"Readme": readme, "May": boxes, "June": boxes})
    with pytest.raises(InputError, match=r"sheets 'May', 'June' each hold a key column; name the one to read with --sheet"):
        apply_file(settings, "custom-fields", both, dry_run=True)
    assert apply_file(settings, "custom-fields", both, dry_run=True, sheet="June").sheet == ("June", "named by --sheet")


@pytest.mark.slow
def test_stop_and_resume_read_the_state_back_and_say_what_changed(pulled: tuple[RunningSandbox, Settings], tmp_path: Path) -> None:
    sandbox, settings = pulled
    account = sandbox.state.world.accounts[K1]
    shipments = account.of_type("shipment")
    tracked = next(s["id"] for s in shipments if not tracking_stopped(account, s))
    ended = next(s for s in shipments if tracking_stopped(account, s))  # stopped by the service: its journey is over
    reason = shipment_view(account, ended)["attributes"]["line_tracking_stopped_reason"]
    assert reason
    file = write_csv(tmp_path / "done.csv", [["shipment_id"], [tracked], [ended["id"]]])

    def said(kind: str) -> dict[str, tuple[str, str]]:
        report = apply_file(settings, kind, file)
        return {r["shipment_id"]: (r["status"], r["detail"]) for r in results(report.results_file)}

    stopped = said("stop-tracking")
    assert stopped[tracked] == ("applied", f'tracking: stopped, read shipment_id "{tracked}", sent "{tracked}"')
    assert stopped[ended["id"]][0] == "unchanged" and stopped[ended["id"]][1].startswith(f"tracking: already stopped ({reason}, since ")
    resumed = said("resume-tracking")
    assert resumed[tracked] == ("applied", f'tracking: resumed, read shipment_id "{tracked}", sent "{tracked}"')
    status, detail = resumed[ended["id"]]
    assert status == "failed" and f"the service still shows it stopped ({reason}, since " in detail
    again = said("resume-tracking")
    assert again[tracked] == ("unchanged", "tracking: already tracking") and again[ended["id"]][0] == "failed"  # never `applied`
    # Each kind of run keeps its own results file: the resume did not overwrite the stop's.
    assert {r["shipment_id"]: r["status"] for r in results(tmp_path / "done.csv.stop-tracking.results.csv")}[tracked] == "applied"


def test_a_tracking_edit_says_what_it_changed(pulled: tuple[RunningSandbox, Settings], tmp_path: Path) -> None:
    sandbox, settings = pulled
    account = sandbox.state.world.accounts[K1]
    request = next(tr for tr in account.tracking_requests.values() if (tr["relationships"]["tracked_object"] or {}).get("data"))
    shipment = account.resource("shipment", request["relationships"]["tracked_object"]["data"]["id"])
    assert shipment is not None
    shipment["attributes"]["tags"] = ["seeded", "kept"]
    number = request["attributes"]["request_number"]
    file = write_csv(tmp_path / "tags.csv", [["request_number", "tags_add", "tags_remove"], [number, "vip", "seeded"]])
    report = apply_file(settings, "tracking-requests", file)
    (row,) = results(report.results_file)
    assert row["detail"] == 'tags: added vip; took out seeded, read tags_add "vip", tags_remove "seeded", sent ["kept","vip"]'
    assert documented(row["detail"])


def test_new_tracking_checks_numbers_and_carriers_before_anything_is_sent(sandbox: RunningSandbox, warehouse: Path, tmp_path: Path) -> None:
    settings = settings_for(sandbox, warehouse)
    account = sandbox.state.world.accounts[K1]
    before = len(account.tracking_requests)
    rows = [
        ["request_type", "request_number", "scac"],
        ["container", "akpu 354575-9", "MAEU"],  # normalized, and sent so
        ["container", "AKPU3545758", ""],  # a wrong check digit
        ["bill_of_lading", "ZZQQ12345", "ZZZZ"],  # no such carrier
        ["bill_of_lading", "MAEV240187365", "MAEV"],  # a typo of one
        ["booking", "EGLV123456789", "EGLV"],  # a carrier that does not track bookings
        ["bill_of_lading", "HLCU123456789", ""],  # detected
    ]
    file = write_csv(tmp_path / "start.csv", rows)
    dry = apply_file(settings, "new-tracking", file, dry_run=True)
    assert len(account.tracking_requests) == before  # nothing sent
    reasons = {p.row: p.reason for p in dry.problems}
    assert reasons[3] == "not a container number: its check digit is 8, and ISO 6346 gives 9 for AKPU354575"
    assert reasons[4].startswith("no shipping line the service tracks with has the SCAC ZZZZ")
    assert "did you mean MAEU (Maersk)?" in reasons[5]
    assert reasons[6] == "Evergreen (EGLV) does not track booking numbers at the service; leave scac empty to have the carrier detected"
    assert all(documented(reasons[row]) for row in (3, 4, 6))
    planned = {c.row: c for c in dry.changes}
    assert sorted(planned) == [2, 7] and planned[2].after["request_number"] == "AKPU3545759"
    detail = {r["request_number"]: r["detail"] for r in results(dry.results_file)}["akpu 354575-9"]
    assert 'read request_type "container", would send "container"' in detail
    assert 'read request_number "akpu 354575-9", would send "AKPU3545759"' in detail

    applied = apply_file(settings, "new-tracking", file)
    details = {r["request_number"]: r["detail"] for r in results(applied.results_file)}
    assert "the service is looking the number up at MAEU" in details["akpu 354575-9"]
    assert "being detected" not in details["akpu 354575-9"] and "the carrier is being detected" in details["HLCU123456789"]
    assert len(account.tracking_requests) == before + 2


def test_a_definition_row_says_what_each_cell_was_read_and_sent_as(sandbox: RunningSandbox, warehouse: Path, tmp_path: Path) -> None:
    settings = settings_for(sandbox, warehouse)
    header = ["entity_type", "api_slug", "display_name", "data_type", "required", "max_length", "options"]
    rows = [
        header,
        ["Cargo", "seal_number", "Seal", "Short_Text", "yes", "12", ""],
        ["Container", "broker", "Broker", "enum", "", "", "acme=Acme Corp"],
    ]
    report = apply_file(settings, "custom-field-definitions", write_csv(tmp_path / "defs.csv", rows))
    seal, broker = (r["detail"] for r in results(report.results_file))
    assert 'read entity_type "Cargo", sent "Container"' in seal and 'read data_type "Short_Text", sent "short_text"' in seal
    assert 'read required "yes", max_length "12", sent {"max_length":12,"required":true}' in seal
    assert 'read options "acme=Acme Corp", sent [{"label":"Acme Corp","position":0,"value":"acme"}]' in broker
