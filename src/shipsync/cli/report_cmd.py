"""`shipsync report`: the warehouse as one self-contained HTML page of charts."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import typer

from shipsync.cli.common import console, line, one_line_errors, settings_from_env
from shipsync.errors import InputError


def _as_of(text: str | None) -> datetime | None:
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise InputError(f"--as-of {text!r} is not a date or time: use ISO 8601, such as 2026-11-30 or 2026-11-30T18:00Z") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


@one_line_errors
def report(
    output: Path = typer.Option(Path("report.html"), "--output", "-o", help="The HTML file to write (replaced whole)."),
    days: int = typer.Option(30, "--days", min=1, max=3660, help="Days of history the time series cover."),
    as_of: str | None = typer.Option(
        None,
        "--as-of",
        help="The moment the fleet is shown at (ISO 8601, UTC unless given); default: now, or the newest transport event "
        "when the last --days days hold none. The sync's charts are always up to now (or its newest run).",
    ),
    demurrage_per_day: float | None = typer.Option(
        None, "--demurrage-per-day", help="What a box costs each day past its last free day, to project demurrage (in --currency)."
    ),
    detention_per_day: float | None = typer.Option(
        None, "--detention-per-day", help="What a box costs each day past the line's last free day, to project detention (in --currency)."
    ),
    currency: str = typer.Option("USD", "--currency", help="The ISO 4217 currency of the daily rates."),
) -> None:
    """The fleet for its manager (headline figures, what needs action, what arrives next), then where
    the boxes are and the sync's health, in one HTML file that opens offline."""
    from shipsync.report import build_report
    from shipsync.report.tariff import Tariff

    tariff = Tariff(demurrage_per_day, detention_per_day, currency.upper())
    settings = settings_from_env()
    result = build_report(settings.lake, output, days=days, as_of=_as_of(as_of), spool=settings.spool_dir, tariff=tariff)
    if result.first_steps:
        console.print(line(result.first_steps))
    for as_of_line in result.as_of_lines():
        console.print(line(as_of_line))
    drawn = f"{result.drawn} of {len(result.outcomes)} charts drawn"
    console.print(line(f"report written to {result.path} ({drawn}, {result.seconds:.1f} s)"))
