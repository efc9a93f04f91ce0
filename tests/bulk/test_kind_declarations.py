"""The table of spreadsheet kinds (`shipsync.bulk.kinds`) is the one place a kind is declared: the
`apply` commands, the ledger's and the report's names follow from it."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from shipsync.bulk.kinds import KINDS, SpreadsheetKind
from shipsync.bulk.model import apply_flow
from shipsync.cli import app
from shipsync.report.sync_words import run_name


@pytest.mark.parametrize("kind", KINDS.values(), ids=lambda k: k.name)
def test_each_kind_is_an_apply_command_and_a_report_name(kind: SpreadsheetKind) -> None:
    result = CliRunner().invoke(app, ["apply", kind.name, "--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert ("--clear-empty" in result.output) == kind.clears_empty
    assert run_name(apply_flow(kind.name)) == kind.run_name


def test_template_names_every_kind() -> None:
    result = CliRunner().invoke(app, ["template", "--help"], terminal_width=300)
    assert all(name in result.output for name in KINDS)


def test_custom_fields_takes_clear_empty_and_the_report_says_each_kind_in_words() -> None:
    result = CliRunner().invoke(app, ["apply", "custom-fields", "--help"], terminal_width=200)
    assert "--clear-empty" in result.output
    assert run_name("apply_stop_tracking") == "Spreadsheet stopping tracking"
    assert run_name("apply_new_tracking") == "Spreadsheet of new tracking"
