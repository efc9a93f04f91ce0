"""The report's window (`days` up to `as_of`) and a query whose text becomes runnable SQL in it.

A query's text names the window with `{since}`, `{until}` and `{as_of}`, and the spool's quarantine
folder with `{quarantine}`; `ReportQuery.runnable` puts literal values in their place, so what an
analyst copies from the page runs as is in any DuckDB session on the warehouse.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

WEEKS_AHEAD = 4  # arrivals look this many weeks past `as_of`: what is still expected


def _timestamp(moment: datetime) -> str:
    return f"TIMESTAMPTZ '{moment.isoformat()}'"


def _string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


@dataclass(frozen=True)
class Window:
    """What the report covers: `days` days up to `as_of`, and where quarantined deliveries are."""

    as_of: datetime
    days: int
    quarantine: Path

    @property
    def since(self) -> datetime:
        return self.as_of - timedelta(days=self.days)

    def dates(self) -> list[date]:
        """Every UTC day the window touches, oldest first."""
        first, last = self.since.astimezone(UTC).date(), self.as_of.astimezone(UTC).date()
        return [first + timedelta(days=n) for n in range((last - first).days + 1)]

    def weeks(self) -> list[date]:
        """The Monday of every week from the window's first to WEEKS_AHEAD weeks past `as_of`."""
        first = self.since.astimezone(UTC).date()
        monday = first - timedelta(days=first.weekday())
        last = self.as_of.astimezone(UTC).date() + timedelta(weeks=WEEKS_AHEAD)
        return [monday + timedelta(weeks=n) for n in range((last - monday).days // 7 + 1)]


@dataclass(frozen=True)
class ReportQuery:
    """One query: its text, the tables or views it needs, and which table's rows come from which command.

    `source` is the table that is empty until `filled_by` has run: when it is, the chart says to run
    that command instead of showing an empty chart.
    """

    key: str
    sql: str
    reads: tuple[str, ...]
    source: str
    filled_by: str

    def runnable(self, window: Window) -> str:
        text = self.sql.strip()
        for name, value in (
            ("{since}", _timestamp(window.since)),
            ("{until}", _timestamp(window.as_of)),
            ("{as_of}", _timestamp(window.as_of)),
            ("{quarantine}", _string(str(window.quarantine / "*.bin"))),
        ):
            text = text.replace(name, value)
        return text
