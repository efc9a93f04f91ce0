"""`shipsync apply KIND FILE`, `shipsync apply undo RUN_ID` and `shipsync template KIND`."""

from __future__ import annotations

from pathlib import Path

import typer

from shipsync.bulk.kinds import KINDS, SpreadsheetKind
from shipsync.cli.common import console, line, one_line_errors, settings_from_env, styled

apply_app = typer.Typer(
    help="Apply a spreadsheet (CSV, XLSX or ODS) to the service: validated, diffed, recorded, undoable.", no_args_is_help=True
)

DRY_RUN = typer.Option(False, "--dry-run", help="Validate and diff, write nothing; the same report.")
SHEET = typer.Option(None, "--sheet", help="XLSX or ODS sheet name (default: the one sheet with a key column).")
ENCODING = typer.Option(None, "--encoding", help="Force the CSV encoding (default: sniffed).")
DELIMITER = typer.Option(None, "--delimiter", help="Force the CSV delimiter: , ; or tab (default: sniffed).")
CLEAR_EMPTY = typer.Option(False, "--clear-empty", help="An empty cell removes the value (default: leave as is).")


def _apply(kind: str, file: Path, dry_run: bool, sheet: str | None, encoding: str | None, delimiter: str | None, clear_empty: bool) -> None:
    from shipsync.bulk.apply import apply_file
    from shipsync.cli.progress import progress_bar

    report = apply_file(
        settings_from_env(),
        kind,
        file,
        dry_run=dry_run,
        sheet=sheet,
        encoding=encoding,
        delimiter=delimiter,
        clear_empty=clear_empty,
        notice=lambda text: console.print(line(text)),
        progress=progress_bar,
    )
    print_report(report)


SHOWN_KINDS = 10  # kinds of problem printed; the results file holds every one


def print_report(report: object) -> None:
    """A line of counts (rows, then cells, then requests), then each kind of problem with its first
    few cells: a file with 100,000 bad rows prints a few dozen lines, not 100,000."""
    from shipsync.bulk.apply import ApplyReport
    from shipsync.bulk.kinds import kind_for
    from shipsync.bulk.readings import first_readings
    from shipsync.bulk.record import problem_groups

    assert isinstance(report, ApplyReport)
    counts, rows = report.counts, report.row_counts
    order = ["applied", "planned", "unchanged", "skipped", "rejected", "failed", "unknown"]
    row_order = ["applied", "partly applied", "planned", "partly planned", "unchanged", "skipped", "rejected", "failed", "unknown"]
    title = "dry run" if report.dry_run else "applied"
    row_text = ", ".join(f"{rows[s]:,} {s}" for s in row_order if rows[s])
    cell_text = ", ".join(f"{counts[s]:,} {s}" for s in order if counts[s])
    console.print(
        line(
            styled(report.kind, "bold"),
            f" {title}: rows: {row_text or 'none'}; cells: {cell_text or 'none'}; {report.requests:,} requests  (run {report.run_id})",
        )
    )
    if report.sheet is not None:
        console.print(line(f"  read sheet {report.sheet[0]!r} of {report.file.name}: {report.sheet[1]}"))
    if shown := first_readings(report.changes):
        console.print(line("  read and sent, the first cell of each column:"))
        for column, text in shown:
            console.print(line(f"    {column}: {text}"))
    groups = problem_groups(report.changes, report.problems)
    for group in groups[:SHOWN_KINDS]:
        colour = "red" if group.status == "rejected" else "yellow"
        console.print(line("  ", styled(f"{group.count:,} {group.status}", colour), f" {group.column}: {group.reason}"))
        for example in group.examples:
            console.print(line(f"    {example}"))
    if len(groups) > SHOWN_KINDS:
        console.print(line(f"  ... and {len(groups) - SHOWN_KINDS} more kinds of problem"))
    if report.results_file:
        console.print(line(f"  results (every row): {report.results_file}"))
    for dead in report.recovered:
        header = dead.header
        console.print(
            line(
                styled(f"  recovered run {header.run_id}", "yellow"),
                f" ({header.kind} of {header.file or 'a spreadsheet'}, stopped before its commit): {dead.writes:,} writes may have"
                " reached the service;"
                f" undo with: shipsync apply undo {header.run_id}",
            )
        )
    if not report.dry_run and counts["applied"] and report.kind != "undo" and kind_for(report.kind).undoable:
        console.print(line(f"  undo with: shipsync apply undo {report.run_id}"))


def _kind_command(kind: SpreadsheetKind) -> None:
    """`shipsync apply NAME FILE`, with `--clear-empty` for a kind that takes it."""
    if kind.clears_empty:

        def clearing(
            file: Path,
            dry_run: bool = DRY_RUN,
            sheet: str | None = SHEET,
            encoding: str | None = ENCODING,
            delimiter: str | None = DELIMITER,
            clear_empty: bool = CLEAR_EMPTY,
        ) -> None:
            _apply(kind.name, file, dry_run, sheet, encoding, delimiter, clear_empty)

        apply_app.command(kind.name, help=kind.help)(one_line_errors(clearing))
        return

    def command(
        file: Path, dry_run: bool = DRY_RUN, sheet: str | None = SHEET, encoding: str | None = ENCODING, delimiter: str | None = DELIMITER
    ) -> None:
        _apply(kind.name, file, dry_run, sheet, encoding, delimiter, False)

    apply_app.command(kind.name, help=kind.help)(one_line_errors(command))


for _kind in KINDS.values():
    _kind_command(_kind)


@apply_app.command("undo")
@one_line_errors
def undo(run_id: str) -> None:
    """Restore what an apply run changed (patch back, delete what it created, re-create what it removed), where the service still
    has what the run left: a value someone changed since is left and reported. Works for a run killed half-way too."""
    from shipsync.bulk.undo import undo_run
    from shipsync.cli.progress import progress_bar

    print_report(undo_run(settings_from_env(), run_id, progress=progress_bar))


@one_line_errors
def template(
    kind: str = typer.Argument(..., help=f"{', '.join(list(KINDS)[:-1])} or {list(KINDS)[-1]}"),
    output: Path | None = typer.Option(None, "--output", help="Where to write (default: KIND.csv here)."),
) -> None:
    """Write a ready-to-fill example spreadsheet (CSV) with the headers and two rows."""
    from shipsync.bulk.templates import write_template

    target = write_template(kind, output or Path(f"{kind}.csv"))
    console.print(line(f"wrote {target}"))
