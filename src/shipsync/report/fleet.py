"""The report's fleet sections below the first screen, from the typed tracking tables and their
views: where the boxes are (those whose journey is over counted apart), how long they dwell at the
port, and how far ETAs slip, each with how many boxes or shipments it is drawn from."""

from __future__ import annotations

from html import escape

from shipsync.report import charts
from shipsync.report.model import Chart, Draw, Rows, Section
from shipsync.report.queries import CONTAINERS_BY_PORT, CONTAINERS_BY_STATUS, DONE_STATUSES, DWELL, ETA_SLIPPAGE
from shipsync.report.tables import columns
from shipsync.report.window import Window

PORT_STATES = ("on the way", "at the port terminal", "gone on by rail", "picked up")
DONE_WORDS = {"delivered": "delivered", "empty_returned": "returned empty"}


def _boxes(count: float) -> str:
    return "1 box" if count == 1 else f"{count:,.0f} boxes"


def _apart(counts: dict[str, float]) -> str:
    """The note that says which boxes a chart leaves out, and how many."""
    done = [f"{_boxes(n)} {words}" for words, n in counts.items() if n]
    return f'<p class="note">Not drawn, their journey over: {escape(" and ".join(done))}.</p>' if done else ""


def _by_status(chart: Chart, rows: Rows, window: Window) -> str:
    active = [r for r in rows if r["status"] not in DONE_STATUSES]
    done = {DONE_WORDS[r["status"]]: float(r["containers"]) for r in rows if r["status"] in DONE_STATUSES}
    if not active:
        return f'<p class="empty">Every box the warehouse knows has finished its journey.</p>{_apart(done)}'
    svg = charts.bars(
        chart.key,
        chart.title,
        [r["status"].replace("_", " ") for r in active],
        {"containers": [r["containers"] for r in active]},
        chart.unit,
    )
    return svg + _apart(done)


def _by_port(chart: Chart, rows: Rows, window: Window) -> str:
    drawn = [r for r in rows if any(r[state] for state in PORT_STATES)]
    returned = {"returned empty": float(sum(r["returned empty"] for r in rows))}
    if not drawn:
        return f'<p class="empty">Every box the warehouse knows is back empty.</p>{_apart(returned)}'
    labels = [f"{r['place']} ({r['port']})" if r["place"] else r["port"] for r in drawn]
    return charts.bars(chart.key, chart.title, labels, columns(drawn, PORT_STATES), chart.unit) + _apart(returned)


def _distribution(counted: str) -> Draw:
    def draw(chart: Chart, rows: Rows, window: Window) -> str:
        total = sum(int(r["n"]) for r in rows)
        note = f'<p class="note">Drawn from {total:,} {counted}; each label says how many are behind its box (n).</p>'
        return note + charts.distributions(chart.key, chart.title, rows, chart.unit)

    return draw


WHERE = Section(
    "fleet",
    "Where the boxes are",
    "Every container the warehouse knows, as of its last pull or delivery. Boxes delivered or returned empty are counted "
    "under each chart, not drawn.",
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
            "Containers by port of discharge (the 25 busiest): on the way, at the port terminal, gone on by rail or picked up",
            "containers",
            CONTAINERS_BY_PORT,
            _by_port,
            "No containers yet.",
        ),
    ),
)

DWELL_AND_SLIP = Section(
    "dwell",
    "Dwell and ETA reliability",
    "Distributions: each box spans the middle half (25th to 75th percentile), the bar across it is the median, "
    "the triangle the mean, and the whiskers reach the 5th and 95th percentiles.",
    (
        Chart(
            "dwell",
            "Dwell at the port: discharge to full out, by port and terminal",
            "days from discharge to full out (boxes out in the window)",
            DWELL,
            _distribution("boxes that left a port terminal full in the window"),
            "No container left a terminal full {window}.",
        ),
        Chart(
            "eta_slippage",
            "ETA reliability per carrier: arrival (or current ETA) against the original ETA",
            "days late (negative: early), shipments arriving in the window",
            ETA_SLIPPAGE,
            _distribution("shipments that arrived or were due in the window"),
            "No shipment with an original ETA arrived or was due {window}.",
        ),
    ),
)
