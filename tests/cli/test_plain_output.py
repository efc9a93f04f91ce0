"""What the CLI prints from data is plain text: Rich markup in a cell, a file name or a message is
shown as typed (never a style, a link or a crash), and control and bidirectional characters are
shown escaped (never an escape sequence that acts on the terminal)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from shipsync.cli import app
from shipsync.cli import progress as cli_progress
from shipsync.cli.common import line, styled
from shipsync.config import Settings
from shipsync.plain_text import plain
from support.sandboxes import RunningSandbox, shipsync_env
from support.warehouse_rows import container_numbers

MARKUP = "[/x] [link=https://evil.example]click[/link] [bold red]loud"
CONTROLS = "\x00\x07\x1b]0;owned\x07\x1b[2J\u202eexe.txt"
ACTING = ("\x00", "\x07", "\x1b", "\u202e")  # none may reach the terminal as such


def _on_screen(output: str) -> None:
    assert not [c for c in ACTING if c in output], repr(output)


def test_plain_escapes_what_acts_on_a_screen_and_keeps_the_rest() -> None:
    assert plain(CONTROLS) == "\\x00\\x07\\x1b]0;owned\\x07\\x1b[2J\\u202eexe.txt"
    assert plain("tab\there\r\nnext\u2028line") == "tab\\there\\r\\nnext\\u2028line"
    assert plain("Zoë · 中文 · C:\\path [a] 😀") == "Zoë · 中文 · C:\\path [a] 😀"


def test_a_line_shows_markup_as_typed_and_styles_only_the_commands_own_words() -> None:
    shown = line(styled("rejected", "red"), " ", MARKUP, " ", CONTROLS)
    assert shown.plain == f"rejected {MARKUP} {plain(CONTROLS)}"
    assert [(span.start, span.end, str(span.style)) for span in shown.spans] == [(0, 8, "red")]
    buffer = io.StringIO()
    Console(file=buffer, force_terminal=True, width=300).print(shown)
    _on_screen(buffer.getvalue().replace("\x1b[31m", "").replace("\x1b[0m", ""))  # only "rejected"'s own colour
    assert "\x1b]8;" not in buffer.getvalue()  # no hyperlink


def test_an_error_naming_a_hostile_file_is_one_plain_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHIPSYNC_WAREHOUSE", str(tmp_path / "w.duckdb"))
    monkeypatch.setenv("SHIPSYNC_API_KEY", "plain-output-test-key")
    name = tmp_path / "x[/x] [link=evil]click[/link]\x07\x1b]0;owned\x07\u202eexe.csv"  # no NUL or / in a file name
    result = CliRunner().invoke(app, ["apply", "custom-fields", str(name), "--dry-run"])
    assert result.exit_code == 1, repr(result.exception)  # Rich raised MarkupError on `[/x]`
    assert result.output.count("\n") == 1 and result.output.startswith("error: ")
    assert "x[/x] [link=evil]click[/link]\\x07\\x1b]0;owned\\x07\\u202eexe.csv: no such file" in result.output
    _on_screen(result.output)


def test_a_progress_label_naming_a_hostile_file_is_shown_as_typed(monkeypatch: pytest.MonkeyPatch) -> None:
    buffer = io.StringIO()
    monkeypatch.setattr(cli_progress, "console", Console(file=buffer, force_terminal=True, width=300))
    label = f"reading {MARKUP} {{task.fields}} {CONTROLS}.csv"
    with cli_progress.progress_bar(label, total=2) as advance:
        advance(2)
    shown = buffer.getvalue()
    assert "[/x] [link=https://evil.example]click[/link]" in shown and "{task.fields}" in shown
    _on_screen(shown.replace("\x1b[", "").replace("\x1b]", ""))  # the bar's own cursor and colour codes aside
    assert "\\x1b]0;owned" in shown and "\x1b]0;owned" not in shown and "\x1b]8;" not in shown


def test_an_apply_summary_shows_hostile_cells_as_typed(pulled: tuple[RunningSandbox, Settings], tmp_path: Path) -> None:
    _, settings = pulled
    number = container_numbers(settings.warehouse, 1)[0]
    sheet = tmp_path / "hostile.csv"
    sheet.write_text(f"container_number,po_number\n{MARKUP},PO-1\n{number}{CONTROLS},PO-2\n", encoding="utf-8")
    env = shipsync_env(settings.api_url, settings.warehouse, settings.require_api_key(), shared_budget="off")
    result = CliRunner().invoke(app, ["apply", "custom-fields", str(sheet), "--dry-run"], env=env)
    assert result.exit_code == 0, repr(result.exception)  # Rich raised MarkupError on `[/x]`
    rejected = [row for row in result.output.splitlines() if row.startswith("    row ")]  # the kind's first cells
    assert len(rejected) == 2, result.output
    assert "[/x] [link=https://evil.example]click[/link] [bold red]loud" in rejected[0]
    assert "\\x1b]0;owned\\x07" in rejected[1] and "\\u202eexe.txt" in rejected[1]
    _on_screen(result.output)
