"""The report's health sections, last on the page: the sync in words (each kind of run, when it
last ran, how it went), requests, retries and 429s per day, and the webhook events and their
delivery problems."""

from __future__ import annotations

from html import escape

from shipsync.plain_text import plain
from shipsync.report import charts
from shipsync.report.model import Chart, Draw, Rows, Section
from shipsync.report.queries import DELIVERY_HEALTH, EVENTS_PER_DAY, REQUESTS_PER_DAY, SYNC_STATUS
from shipsync.report.sync_words import sync_line
from shipsync.report.tables import by_day, pivot
from shipsync.report.window import Window


def _in_words(chart: Chart, rows: Rows, window: Window) -> str:
    items = "".join(f"<li>{escape(plain(sync_line(row, window.now, window.days)))}</li>" for row in rows)
    return f'<ul class="sync-lines">{items}</ul>'


def _requests(chart: Chart, rows: Rows, window: Window) -> str:
    days = window.dates()
    return charts.stacked_columns(chart.key, chart.title, days, by_day(rows, days, ("requests",)), chart.unit)


def _trouble(chart: Chart, rows: Rows, window: Window) -> str:
    days = window.dates()
    return charts.lines(chart.key, chart.title, days, by_day(rows, days, ("retries", "429s", "failed runs")), chart.unit)


def _per_day(series: str, value: str) -> Draw:
    def draw(chart: Chart, rows: Rows, window: Window) -> str:
        days, values = pivot(rows, "day", series, value, window.dates())
        return charts.stacked_columns(chart.key, chart.title, days, values, chart.unit)

    return draw


SYNC = Section(
    "sync",
    "Sync health",
    "How the pulls, loads and spreadsheet runs went, and what they asked of the service.",
    (
        Chart(
            "sync_status",
            "Each kind of run: when it last ran, and how it went",
            "one line per kind of run; times to when the report was built",
            SYNC_STATUS,
            _in_words,
            "No run has finished yet.",
        ),
        Chart(
            "requests_per_day",
            "Requests to the service per day",
            "requests per UTC day",
            REQUESTS_PER_DAY,
            _requests,
            "No runs started {window}.",
        ),
        Chart(
            "trouble_per_day",
            "Retries, 429s (rate limited) and failed runs per day",
            "count per UTC day",
            REQUESTS_PER_DAY,
            _trouble,
            "No runs started {window}.",
        ),
    ),
)

EVENTS = Section(
    "events",
    "Webhook events",
    "What the service told us, per day it arrived, and what went wrong on the way in.",
    (
        Chart(
            "events_per_day",
            "Events received per day, by kind (the 7 commonest, the rest together)",
            "events per UTC day",
            EVENTS_PER_DAY,
            _per_day("kind", "events"),
            "No webhook events arrived {window}.",
        ),
        Chart(
            "delivery_health",
            "Delivery problems per day: duplicates, conflicts, dead letters, quarantine",
            "deliveries per UTC day",
            DELIVERY_HEALTH,
            _per_day("problem", "deliveries"),
            "No delivery problems {window}: no repeated or conflicting bodies, dead letters or quarantined deliveries.",
        ),
    ),
)
