"""`shipsync sql` (analysts: the warehouse read-only) and `shipsync warehouse import|maintain`."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.table import Table

from shipsync.cli.common import console, line, one_line_errors, settings_from_env
from shipsync.plain_text import plain
from shipsync.redaction import redact

if TYPE_CHECKING:
    from shipsync.warehouse.read_only_sql import ReadOnlyPrompt

warehouse_app = typer.Typer(help="The warehouse itself: import an older one, maintain its files and snapshots.", no_args_is_help=True)


def _cell(value: object) -> str:
    """A value as plain text (`shipsync.plain_text`: control and escape characters escaped), its
    line breaks kept: the table shows a value of several lines (an EXPLAIN plan) on several lines."""
    return "NULL" if value is None else "\n".join(plain(part) for part in str(value).split("\n"))


def _table(columns: list[str], rows: list[tuple[Any, ...]]) -> Table:
    """Rows as a table for the terminal: every name and value as plain text."""
    table = Table(*(_cell(c) for c in columns))
    for row in rows:
        table.add_row(*(_cell(v) for v in row))
    return table


def _print_result(columns: list[str], rows: list[tuple[Any, ...]], output: str) -> None:
    """A result as a table, or as CSV: exact values into a file or a pipe, escaped on a terminal."""
    if output == "csv":
        import csv

        shown = sys.stdout.isatty()
        writer = csv.writer(sys.stdout)
        writer.writerow([plain(c) for c in columns] if shown else columns)
        writer.writerows(([v if v is None else plain(str(v)) for v in row] for row in rows) if shown else rows)
    elif columns:
        console.print(_table(columns, rows), markup=False)
        console.print(f"({len(rows):,} row{'s' if len(rows) != 1 else ''})", markup=False)


@one_line_errors
def sql(
    command: str | None = typer.Option(None, "-c", "--command", help="Run this SQL (read-only) and print what it returns, then exit."),
    print_attach: bool = typer.Option(
        False, "--print-attach", help="Print the statements that open the warehouse read-only from any DuckDB, then exit."
    ),
    output: str = typer.Option("table", "--output", help="How -c prints rows: table or csv."),
) -> None:
    """The warehouse, read-only: an interactive SQL prompt, one statement (-c), or the statements
    that open it from a DuckDB shell or a notebook (--print-attach). Never waits for a run. Only
    reads run: no statement writes a file, attaches a database or changes a setting."""
    from shipsync.warehouse.analyst import attach_script
    from shipsync.warehouse.read_only_sql import read_only_prompt

    location = settings_from_env().lake
    if print_attach:
        print(attach_script(location))
        return
    with read_only_prompt(location) as prompt:
        if command is not None:
            columns, rows = prompt.run(command)
            _print_result(columns, rows, output)
            return
        _prompt(prompt)


def _prompt(prompt: ReadOnlyPrompt) -> None:
    """Read statements (ended by `;`) and print what each returns; `.quit` or end of input leaves."""
    import duckdb

    from shipsync.warehouse.read_only_sql import RefusedStatement

    with contextlib.suppress(ImportError):
        import readline  # noqa: F401  (line editing and history at the prompt, where the platform has it)
    console.print("shipsync sql: the warehouse, read-only. End statements with ';', .quit to leave.", markup=False)
    pending = ""
    while True:
        try:
            typed = input("shipsync> " if not pending else "      ...> ")
        except (EOFError, KeyboardInterrupt):
            print()
            return
        if not pending and typed.strip() in (".quit", ".exit", "\\q"):
            return
        pending += typed + "\n"
        if not pending.rstrip().endswith(";"):
            continue
        try:
            columns, rows = prompt.run(pending)
            _print_result(columns, rows, "table")
        except (duckdb.Error, RefusedStatement) as exc:
            console.print(line("error: ", redact(str(exc).strip().splitlines()[0])))
        pending = ""


@warehouse_app.command("import")
@one_line_errors
def import_old(
    old: Path = typer.Argument(..., help="The warehouse file of the last layout (SHIPSYNC_WAREHOUSE before the lake: shipsync.duckdb)."),
) -> None:
    """Copy a warehouse of the last layout (a DuckDB file and its published Parquet) into the lake."""
    from shipsync.warehouse.import_file import import_warehouse

    settings = settings_from_env()
    report = import_warehouse(settings.lake, old)
    console.print(f"imported {report.source} into {settings.lake.describe()} as snapshot {report.snapshot_id}:", markup=False)
    console.print(_table(["table", "rows"], [(name, f"{rows:,}") for name, rows in sorted(report.rows.items())]), markup=False)


@warehouse_app.command("maintain")
@one_line_errors
def maintain_lake(
    retention_days: float | None = typer.Option(
        None, "--retention-days", help="Keep snapshots this many days (default SHIPSYNC_SNAPSHOT_RETENTION_DAYS, 30)."
    ),
) -> None:
    """Merge small files, expire old snapshots, delete files nothing needs (DuckLake's maintenance)."""
    from datetime import timedelta

    from shipsync.warehouse.maintenance import maintain

    settings = settings_from_env()
    days = retention_days if retention_days is not None else settings.snapshot_retention_days
    done = maintain(settings.lake, retention=timedelta(days=days))
    console.print(line(done.summary(settings.lake.describe())))
