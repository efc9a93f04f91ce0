"""The report's sections, in the order the page shows them."""

from __future__ import annotations

from shipsync.report.health import EVENTS, SYNC
from shipsync.report.model import Section

SECTIONS: tuple[Section, ...] = (EVENTS, SYNC)
