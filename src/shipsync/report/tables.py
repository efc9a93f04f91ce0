"""Rows as an HTML table (escaped), and rows reshaped for the charts (one series per category)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime
from decimal import Decimal
from html import escape
from typing import Any

from shipsync.plain_text import plain

MAX_TABLE_ROWS = 50  # the most urgent fit on a page or two; the SQL lists the rest


def cell(value: Any) -> str:
    """A value as a reader wants it: times to the minute in UTC, lists joined, numbers grouped,
    text plain (control and bidirectional characters escaped: `\\x00`, `\\u202e`)."""
    if value is None:
        return ""
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M") + (" UTC" if value.utcoffset() is not None and not value.utcoffset() else "")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float | Decimal):
        return f"{value:,.1f}"
    if isinstance(value, list | tuple):
        return ", ".join(cell(v) for v in value)
    return plain(str(value))


def _kind(numeric: bool, value: Any) -> str:
    """A cell's class: `num` (right-aligned), `when` (a date or time: never broken at its dashes), or none
    (text, which wraps at spaces so that a table fits its card)."""
    if numeric or (isinstance(value, int | float | Decimal) and not isinstance(value, bool)):
        return "num"
    return "when" if isinstance(value, date) else ""


def html_table(
    key: str,
    rows: Sequence[dict[str, Any]],
    numeric: Sequence[str] = (),
    *,
    nowrap: Sequence[str] = (),
    wide: Sequence[str] = (),
    scroll: bool = False,
) -> str:
    """A captioned-by-id table; at most MAX_TABLE_ROWS rows, saying how many were left out. Keys,
    numbers, dates and the `nowrap` columns stay on one line; text wraps (the `wide` columns less
    soon), so that a table fits its card. A `scroll` table shows its first rows and scrolls for the
    rest (on screen; print shows all)."""
    if not rows:
        return ""
    columns = list(rows[0])
    head = "".join(f'<th scope="col">{escape(plain(c))}</th>' for c in columns)
    body = []
    for row in rows[:MAX_TABLE_ROWS]:
        cells = "".join(
            f'<td class="{"when" if c in nowrap else "wide" if c in wide else _kind(c in numeric, row[c])}">{escape(cell(row[c]))}</td>'
            for c in columns
        )
        body.append(f"<tr>{cells}</tr>")
    more = ""
    if len(rows) > MAX_TABLE_ROWS:
        more = f'<p class="note">The first {MAX_TABLE_ROWS} of {len(rows):,} rows; the query below lists them all.</p>'
    wrap = "table-wrap scroll" if scroll else "table-wrap"
    return (
        f'<div class="{wrap}"><table aria-labelledby="{key}-caption"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>{more}"
    )


def money(amount: float | Decimal | None, currency: str | None) -> str:
    """An amount as a reader wants it, with its currency: `USD 1,575`, `EUR 12.50`; `` for none."""
    if amount is None:
        return ""
    value = float(amount)
    shown = f"{value:,.0f}" if value == round(value) else f"{value:,.2f}"
    return f"{plain(currency)} {shown}" if currency else f"{shown} (no currency given)"


def day_text(value: date | None) -> str:
    """A day as `Mon 30 Nov 2026`, or `` for none."""
    return value.strftime("%a %d %b %Y") if value else ""


def ago(moment: datetime | None, now: datetime) -> str:
    """How long before `now`: `35 min ago`, `2 h ago`, `3 days ago`; `never` for none."""
    if moment is None:
        return "never"
    minutes = int((now - moment).total_seconds() // 60)
    if minutes < 0:
        return "in the future (the clocks disagree)"
    if minutes < 60:
        return f"{minutes} min ago"
    if minutes < 48 * 60:
        return f"{minutes // 60} h ago"
    return f"{minutes // (24 * 60)} days ago"


def pivot(
    rows: Sequence[dict[str, Any]], x: str, series: str, value: str, xs: Sequence[Any] | None = None
) -> tuple[list[Any], dict[str, list[float]]]:
    """Long rows (x, series, value) as x values (`xs`, or those the rows have) and one list per series.

    Rows whose x is not among `xs` are left out; an x no row has gets zeros.
    """
    keys = list(xs) if xs is not None else sorted({row[x] for row in rows})
    position = {v: i for i, v in enumerate(keys)}
    out: dict[str, list[float]] = {}
    for row in rows:
        values = out.setdefault(str(row[series]), [0.0] * len(keys))
        if row[x] in position:
            values[position[row[x]]] += float(row[value] or 0)
    return keys, out


def by_day(rows: Sequence[dict[str, Any]], days: Sequence[Any], names: Sequence[str]) -> dict[str, list[float]]:
    """Wide rows keyed by `day` as one list per named column over `days` (zeros where no row)."""
    at = {row["day"]: row for row in rows}
    return {name: [float((at[d][name] if d in at else 0) or 0) for d in days] for name in names}


def columns(rows: Sequence[dict[str, Any]], names: Sequence[str]) -> dict[str, list[float]]:
    """Wide rows as one list of values per named column."""
    return {name: [float(row[name] or 0) for row in rows] for name in names}
