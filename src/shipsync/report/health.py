"""The report's health sections: webhook events and their delivery problems, and the sync itself
(runs per flow, requests, 429s, retries, failures, and how fresh the analysts' data is)."""

from __future__ import annotations

from shipsync.report import charts
from shipsync.report.model import Chart, Draw, Rows, Section
from shipsync.report.queries import DELIVERY_HEALTH, EVENTS_PER_DAY, FRESHNESS, REQUESTS_PER_DAY, RUNS_PER_FLOW
from shipsync.report.tables import as_table, by_day, columns, pivot
from shipsync.report.window import Window

RUN_STATES = ("completed", "completed with errors", "failed", "running or cut off")


def _runs(chart: Chart, rows: Rows, window: Window) -> str:
    return charts.bars(chart.key, chart.title, [r["flow"] for r in rows], columns(rows, RUN_STATES), chart.unit)


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

SYNC = Section(
    "sync",
    "Sync health",
    "Every pull and apply writes a row in sync_runs: how many ran, how they ended, what they asked of the service.",
    (
        Chart(
            "runs_per_flow",
            "Runs per flow, by outcome",
            "runs in the window",
            RUNS_PER_FLOW,
            _runs,
            "No runs started {window}.",
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
        Chart(
            "freshness",
            "Freshness: the last success of each flow",
            "hours since, at the report's time",
            FRESHNESS,
            as_table,
            "No run has finished yet.",
        ),
    ),
)
