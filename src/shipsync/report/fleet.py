"""The report's fleet sections, from the typed tracking tables and their views: where the boxes are,
when they arrive, which are at risk of demurrage, how long they dwell, and how far ETAs slip."""

from __future__ import annotations

from shipsync.report import charts
from shipsync.report.model import Chart, Rows, Section
from shipsync.report.queries import ARRIVALS_PER_WEEK, CONTAINERS_BY_PORT, CONTAINERS_BY_STATUS, DWELL, ETA_SLIPPAGE, PICKUP_RISK
from shipsync.report.tables import as_table, columns, pivot
from shipsync.report.window import Window

PORT_STATES = ("on the way", "at the port", "out of the port")
ARRIVAL_MEASURES = ("expected (original ETA)", "arrived (actual)", "not arrived yet (current ETA)")


def _by_status(chart: Chart, rows: Rows, window: Window) -> str:
    return charts.bars(chart.key, chart.title, [r["status"] for r in rows], {"containers": [r["containers"] for r in rows]}, chart.unit)


def _by_port(chart: Chart, rows: Rows, window: Window) -> str:
    labels = [f"{r['port']} · {r['place']}" if r["place"] else r["port"] for r in rows]
    return charts.bars(chart.key, chart.title, labels, columns(rows, PORT_STATES), chart.unit)


def _arrivals(chart: Chart, rows: Rows, window: Window) -> str:
    weeks, measured = pivot(rows, "week", "measure", "containers", window.weeks())
    series = {name: measured.get(name, [0.0] * len(weeks)) for name in ARRIVAL_MEASURES}
    return charts.grouped_columns(chart.key, chart.title, weeks, series, chart.unit)


def _distribution(chart: Chart, rows: Rows, window: Window) -> str:
    return charts.distributions(chart.key, chart.title, rows, chart.unit)


WHERE = Section(
    "fleet",
    "Where the boxes are",
    "Every container the warehouse knows, as of its last pull or delivery.",
    (
        Chart(
            "containers_by_status",
            "Containers by current status",
            "containers",
            CONTAINERS_BY_STATUS,
            _by_status,
            "No containers yet.",
        ),
        Chart(
            "containers_by_port",
            "Containers by port of discharge (the 25 busiest), on the way, at the port or out",
            "containers",
            CONTAINERS_BY_PORT,
            _by_port,
            "No containers yet.",
        ),
    ),
)

ARRIVALS = Section(
    "arrivals",
    "Arrivals",
    "Containers per week at the port of discharge: when they were first expected, when they arrived, and what is still "
    "expected (four weeks past the report's date included). Weeks start on Monday, UTC.",
    (
        Chart(
            "arrivals_per_week",
            "Arrivals per week: original ETA against actual arrival",
            "containers per week",
            ARRIVALS_PER_WEEK,
            _arrivals,
            "No container was expected or arrived {window}.",
        ),
    ),
)

RISK = Section(
    "risk",
    "Pickup risk",
    "Discharged or available, not picked up, and on hold or with a last free day passed or within 3 days of the "
    "fleet's as-of (the pickup_risk view counts to today; for another horizon, filter containers_awaiting_pickup). "
    "Most urgent first.",
    (
        Chart(
            "pickup_risk",
            "Containers at risk of demurrage, most urgent first",
            "one row per container; days left from the fleet's as-of to the last free day (negative: passed)",
            PICKUP_RISK,
            as_table,
            "No container is at risk: none is past or within 3 days of its last free day at the fleet's as-of, or on hold.",
        ),
    ),
)

DWELL_AND_SLIP = Section(
    "dwell",
    "Dwell and ETA slippage",
    "Distributions: each box spans the middle half (25th to 75th percentile), the bar across it is the median, "
    "the triangle the mean, and the whiskers reach the 5th and 95th percentiles.",
    (
        Chart(
            "dwell",
            "Dwell at the port: discharge to full out, by port and terminal",
            "days from discharge to full out (boxes out in the window)",
            DWELL,
            _distribution,
            "No container left a terminal full {window}.",
        ),
        Chart(
            "eta_slippage",
            "ETA slippage per carrier: arrival (or current ETA) against the original ETA",
            "days late (negative: early), shipments arriving in the window",
            ETA_SLIPPAGE,
            _distribution,
            "No shipment with an original ETA arrived or was due {window}.",
        ),
    ),
)
