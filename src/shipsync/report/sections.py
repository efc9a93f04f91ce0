"""The report's sections, in the order the page shows them: the fleet first, then its plumbing."""

from __future__ import annotations

from shipsync.report.fleet import ARRIVALS, DWELL_AND_SLIP, RISK, WHERE
from shipsync.report.health import EVENTS, SYNC
from shipsync.report.model import Section

SECTIONS: tuple[Section, ...] = (WHERE, ARRIVALS, RISK, DWELL_AND_SLIP, EVENTS, SYNC)
