"""The report's first screen, for the fleet manager: the headline figures, the boxes that need
action (pickup risk with consignee, references, deadlines and what they cost) and the vessels due
in the next weeks. Figures carry their unit, amounts their currency."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from html import escape
from typing import Any

from shipsync.plain_text import plain
from shipsync.report.model import Chart, Rows, Section
from shipsync.report.queries import HEADLINE, PICKUP_RISK, UPCOMING_ARRIVALS
from shipsync.report.tables import cell, day_text, html_table, money
from shipsync.report.window import Window

RISK_DAYS = 3  # the horizon of the pickup_risk view, which the headline and the list share


def _boxes(count: int) -> str:
    return "1 box" if count == 1 else f"{count:,} boxes"


def _card(value: str, label: str, detail: str) -> str:
    return (
        f'<div class="card"><div class="figure-value">{escape(value)}</div>'
        f'<div class="figure-label">{escape(label)}</div><div class="figure-detail">{escape(detail)}</div></div>'
    )


def _fees(fees: list[dict[str, Any]] | None) -> tuple[str, str]:
    if not fees:
        return "none", "no fees reported on boxes not yet returned empty"
    shown = " · ".join(money(f["amount"], f["currency"]) for f in fees)
    boxes = sum(int(f["boxes"]) for f in fees)
    return shown, f"on {_boxes(boxes)} not yet returned empty"


def _headline(chart: Chart, rows: Rows, window: Window) -> str:
    (row,) = rows
    fees, on = _fees(row["fees_to_date"])
    cards = (
        _card(f"{row['on_the_water']:,}", "on the water", "boxes on a ship, not yet discharged"),
        _card(f"{row['waiting_at_the_port']:,}", "waiting at the port", "boxes discharged, in the terminal's yard"),
        _card(f"{row['at_risk']:,}", "at risk", f"boxes on hold or due within {RISK_DAYS} days"),
        _card(fees, "fees to date", on),
    )
    return f'<div class="cards">{"".join(cards)}</div>'


def _days(count: int) -> str:
    return "1 day" if count == 1 else f"{count:,} days"


def _days_left(days: int | None) -> str:
    if days is None:
        return "no last free day"
    if days < 0:
        return f"{_days(-days)} late"
    return "today" if days == 0 else _days(days)


def _references(row: dict[str, Any]) -> str:
    parts = [f"B/L {row['bill_of_lading']}"] if row["bill_of_lading"] else []
    if row["ref_numbers"]:
        parts.append(cell(row["ref_numbers"]))
    if row["po"]:
        parts.append(f"PO {row['po']}")
    return " · ".join(parts)


def _cost(amount: float | None, currency: str, days: int, detention: int | None = None) -> str:
    """A projected cost, or the days it counts when no rate is given."""
    if amount is not None:
        return money(amount, currency)
    counted = [f"{days} d demurrage"] if days else []
    if detention:
        counted.append(f"{detention} d detention")
    return ", ".join(counted) if counted else "none"


def _short_day(value: date | None) -> str:
    return value.strftime("%a %d %b") if value else ""


def _due(row: dict[str, Any]) -> str:
    """`Wed 25 Nov, 3 days late`: the last free day and how far it is."""
    if row["last_free_day"] is None:
        return "not known yet"
    return f"{_short_day(row['last_free_day'])}, {_days_left(row['days_left'])}"


def _place(*parts: object) -> str:
    return " · ".join(plain(str(p)) for p in parts if p)


def _action_list(chart: Chart, rows: Rows, window: Window) -> str:
    shown = [
        {
            "Container": row["container"],
            "Consignee": row["consignee"] or "",
            "References": _references(row),
            "Port": _place(row["port"] or row["pod_locode"], row["port_terminal"]),
            "Inland ramp": row["inland_ramp"] or "",
            "Last free day": _due(row),
            "Holds": cell(row["holds"]) or "",
            "Fees": money(row["fees"], row["fee_currency"]),
            "D&D to date": _cost(row["cost_to_date"], row["tariff_currency"], row["demurrage_days"], row["detention_days"]),
            "D&D at line LFD": _cost(row["cost_at_line_lfd"], row["tariff_currency"], row["demurrage_days_at_line_lfd"]),
            "Return empty by": _short_day(row["return_empty_by"]),
        }
        for row in rows
    ]
    note = (
        f'<p class="note">{_boxes(len(rows))}, most urgent first; days counted to {escape(day_text(window.as_of.date()))}. '
        "D&amp;D: demurrage for each day past the last free day, detention for each day past the line's last free day "
        f"(when the empty is due back); {escape(window.tariff.described())}.</p>"
    )
    money_columns = ("Fees", "D&D to date", "D&D at line LFD")
    nowrap = ("Container", "References", "Last free day", "Return empty by")
    return note + html_table(chart.key, shown, money_columns, nowrap=nowrap, wide=("Port",), scroll=True)


def _week(monday: date, today: date) -> str:
    this_monday = today - timedelta(days=today.weekday())
    if monday == this_monday:
        return "this week"
    if monday == this_monday + timedelta(weeks=1):
        return "next week"
    return f"week of {monday.strftime('%d %b')}" if monday > this_monday else "overdue"


def _eta(moment: datetime) -> str:
    return moment.strftime("%a %d %b %H:%M UTC")


def _arrivals(chart: Chart, rows: Rows, window: Window) -> str:
    today = window.as_of.date()
    shown = [
        {
            "When": _week(row["week"], today),
            "Vessel": row["vessel"] or "(not named yet)",
            "Voyage": row["voyage"] or "",
            "Port": _place(row["port"], row["pod_locode"]),
            "ETA": _eta(row["eta"]),
            "Boxes": f"{row['boxes']:,}",
            "Shipments": f"{row['shipments']:,}",
        }
        for row in rows
    ]
    boxes = sum(int(row["boxes"]) for row in rows)
    note = f'<p class="note">{_boxes(boxes)} on {len(rows):,} vessel calls not yet arrived, soonest first.</p>'
    return note + html_table(chart.key, shown, ("Boxes", "Shipments"), nowrap=("When", "ETA"), scroll=True)


GLANCE = Section(
    "glance",
    "At a glance",
    "",
    (
        Chart(
            "headline",
            "The fleet today",
            "containers the warehouse knows, as of its last pull or delivery; fees in their currency",
            HEADLINE,
            _headline,
            "No containers yet.",
        ),
    ),
)

ACTION = Section(
    "action",
    "Needs action",
    "",
    (
        Chart(
            "pickup_risk",
            "Pick up soon: boxes at risk of demurrage",
            f"on hold, or the last free day passed or within {RISK_DAYS} days",
            PICKUP_RISK,
            _action_list,
            f"Nothing needs action: no box waiting for pickup is on hold or within {RISK_DAYS} days of its last free day.",
        ),
    ),
)

UPCOMING = Section(
    "arrivals",
    "Arriving next",
    "",
    (
        Chart(
            "upcoming_arrivals",
            "Vessels due in the next four weeks, by week",
            "one row per vessel call at a port of discharge; ETAs in UTC",
            UPCOMING_ARRIVALS,
            _arrivals,
            "No vessel with boxes of yours is due in the four weeks after the fleet's as-of.",
        ),
    ),
)
