"""The sandbox world's time: where its seeded journeys sit relative to the moment it starts, and
how it writes instants.

A world starts at a moment (by default the current hour, so a fresh sandbox is about the present)
and stays there until `/_admin/advance` or a simulation moves it on. Everything seeded is placed
relative to that start, from the seed alone: shipments depart over the 200 days from the world's
`epoch` (`SEEDED_SPAN` before the start), so at the start most journeys are over, some boxes are
at sea, some wait at the terminal with their last free day a few days off, and a few have not
left. A fixed start (tests, `--start`) gives the same world, date for date, on any day.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from functools import lru_cache

HOUR, DAY = timedelta(hours=1), timedelta(days=1)
# From the world's epoch (the earliest seeded departure) to its start.
SEEDED_SPAN = timedelta(days=199, hours=4)
# The start the tests fix: the world every test that asserts on dates was written against.
REFERENCE_START = datetime(2026, 7, 23, 12, 0, tzinfo=UTC)


def start_of(moment: datetime | None = None) -> datetime:
    """A world's start: the given moment (a naive one read as UTC), or else the current hour."""
    if moment is None:
        return datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    return moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)


def epoch_of(start: datetime) -> datetime:
    """The earliest seeded departure of a world that starts at `start`."""
    return start - SEEDED_SPAN


@lru_cache(maxsize=1 << 16)  # each delivery of a journey names its instants again
def iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def now_iso() -> str:
    """The machine's current instant, as the service writes it (records made by a request)."""
    return iso(datetime.now(UTC))


def parse(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def day_start(moment: datetime) -> datetime:
    return moment.replace(hour=0, minute=0, second=0, microsecond=0)
