"""What shipsync writes is its owner's (issue 36, item 8): the report and a spreadsheet's results
file are written 0600 through `safe_files`, like the secrets store and up's state, under the usual
umask (0022) that left them 0644 and readable by every user of the host."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from shipsync.bulk.reader import read_sheet
from shipsync.bulk.record import write_results_file
from shipsync.bulk.templates import write_template
from shipsync.report.build import build_report
from support.lake import location


@pytest.fixture
def usual_umask() -> Iterator[None]:
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.usefixtures("usual_umask")
def test_the_report_results_files_and_templates_are_private(tmp_path: Path) -> None:
    report = build_report(location(tmp_path / "warehouse"), tmp_path / "report.html", spool=tmp_path / "spool").path
    sheet = tmp_path / "tags.csv"
    sheet.write_text("container_number,po_number\nCSQU3054383,PO-1\n")
    results = write_results_file(read_sheet(sheet), [], [], "custom-fields")
    template = write_template("custom-fields", tmp_path / "custom-fields.csv")
    assert {path.name: mode(path) for path in (report, results, template)} == dict.fromkeys(
        ("report.html", "tags.csv.custom-fields.results.csv", "custom-fields.csv"), 0o600
    )
