"""Feedback that teaches: every cell's result says what was read and what was sent, in the results
file, `bulk_results` and the terminal."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from shipsync.bulk.apply import apply_file
from shipsync.cli.apply_cmd import print_report
from shipsync.config import Settings
from support.lake import analyst
from support.sandboxes import RunningSandbox
from support.warehouse_rows import container_numbers


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
    assert 'customs_cleared_on: create applied, read "15.03.2026", sent "2026-03-15"' in detail
    print_report(applied)
    printed = capsys.readouterr().out
    assert 'customs_cleared_on: read "15.03.2026", sent "2026-03-15"' in printed and 'priority: read "High", sent "high"' in printed
    with analyst(settings.warehouse) as con:
        stored = dict(con.execute("SELECT field, detail FROM bulk_results WHERE run_id = ?", [applied.run_id]).fetchall())
    assert stored["customs_cleared_on"] == 'read "15.03.2026", sent "2026-03-15"'
