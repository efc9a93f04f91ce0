"""The report's sections, in the order the page shows them: what a fleet manager asks first (the
headline figures, what needs action, what arrives next), then the fleet, then the sync last."""

from __future__ import annotations

from shipsync.report.action import ACTION, GLANCE, UPCOMING
from shipsync.report.fleet import DWELL_AND_SLIP, WHERE
from shipsync.report.health import EVENTS, SYNC
from shipsync.report.model import Section

SECTIONS: tuple[Section, ...] = (GLANCE, ACTION, UPCOMING, WHERE, DWELL_AND_SLIP, EVENTS, SYNC)
