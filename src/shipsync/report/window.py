"""The report's windows (`days` up to an as-of, on each of its two clocks) and a query whose text
becomes runnable SQL in one.

Two clocks, because a warehouse holds two kinds of time. The fleet's is when things happened to the
boxes (arrivals, discharges, full-outs, ETAs): a warehouse of last year, or a sandbox whose world
stands still, is about its own past. The sync's is when shipsync ran and received (runs, requests,
webhook deliveries): always the machine's. A window on one clock shows nothing of the other, so
each chart names its clock, and each clock takes its own as-of: the fleet's is `--as-of` when
given; otherwise each is now, unless its newest moment in the warehouse is older than the window,
and then that moment, so that a report of an old warehouse shows its last days rather than empty
charts. The page says which as-of each clock took, and why.

A query's text names the window with `{since}`, `{until}`, `{as_of}` and `{now}`, the spool's
quarantine folder with `{quarantine}`, and the tariff's rates with `{demurrage_per_day}`,
`{detention_per_day}` and `{currency}`; `ReportQuery.runnable` puts literal values in their place,
so what an analyst copies from the page runs as is in any DuckDB session on the warehouse.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Literal

from shipsync.report.tariff import NO_RATES, Tariff
from shipsync.warehouse.identifiers import literal

WEEKS_AHEAD = 4  # arrivals look this many weeks past `as_of`: what is still expected

ClockName = Literal["fleet", "sync"]


def _timestamp(moment: datetime) -> str:
    return f"TIMESTAMPTZ '{moment.isoformat()}'"


def minute(moment: datetime) -> str:
    """A moment as the page writes it: `2026-07-23 14:05 UTC`."""
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


@dataclass(frozen=True)
class Clock:
    """One of the report's two kinds of time: what its newest moment is, and the SQL that finds it
    (one value, never after `{now}`: a date in the future is no moment that has come)."""

    name: ClockName
    moments: str  # what the newest moment is of, said to a reader: "transport event"
    newest: str
    reads: tuple[str, ...]
    follows_as_of: bool  # whether `--as-of` sets it


@dataclass(frozen=True)
class Window:
    """What a chart covers: `days` days up to `as_of`, `why` that as-of, the machine's `now`, where
    quarantined deliveries are, and the rates its costs are projected with."""

    as_of: datetime
    days: int
    quarantine: Path
    now: datetime
    why: str = "now"
    tariff: Tariff = NO_RATES

    @property
    def since(self) -> datetime:
        return self.as_of - timedelta(days=self.days)

    def described(self) -> str:
        """`in the 30 days to 2026-07-23 14:05 UTC`, for messages."""
        return f"in the {self.days} days to {minute(self.as_of)}"

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

    def runnable(self, sql: str) -> str:
        """`sql` with the window's values in place of its names."""
        text = sql.strip()
        for name, value in (
            ("{since}", _timestamp(self.since)),
            ("{until}", _timestamp(self.as_of)),
            ("{as_of}", _timestamp(self.as_of)),
            ("{now}", _timestamp(self.now)),
            ("{quarantine}", literal(str(self.quarantine / "*.bin"))),
            *self.tariff.sql_values().items(),
        ):
            text = text.replace(name, value)
        return text


def clock_window(
    clock: Clock,
    newest: datetime | None,
    *,
    days: int,
    now: datetime,
    quarantine: Path,
    as_of: datetime | None = None,
    tariff: Tariff = NO_RATES,
) -> Window:
    """The window of `clock`: up to `as_of` if given and the clock follows it, else up to now, or up
    to the clock's `newest` moment when that is older than the window to now."""
    if as_of is not None and clock.follows_as_of:
        return Window(as_of, days, quarantine, now, "given with `--as-of`", tariff)
    if newest is None or newest >= now - timedelta(days=days):
        return Window(now, days, quarantine, now, "now", tariff)
    why = f"the newest {clock.moments} in the warehouse: none in the {days} days up to now"
    return Window(newest, days, quarantine, now, why, tariff)


@dataclass(frozen=True)
class ReportQuery:
    """One query: its text, the tables or views it needs, which table's rows come from which
    command, the clock its window is on, and (for a windowed query) the SQL of the newest moment
    it could show, for a chart that is empty in its window to say where its data is.

    `source` is the table that is empty until `filled_by` has run: when it is, the chart says to run
    that command instead of showing an empty chart.
    """

    key: str
    sql: str
    reads: tuple[str, ...]
    source: str
    filled_by: str
    clock: ClockName = "fleet"
    newest: str = ""

    def runnable(self, window: Window) -> str:
        return window.runnable(self.sql)
