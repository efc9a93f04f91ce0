"""Building the report: run each chart's query on the warehouse (read-only), draw what came back,
and write the page in one go (a file is either the whole new report or the previous one), through
`shipsync.safe_files` (a link planted at the page's name or beside it is never followed).

A chart whose tables are missing or empty says which command fills them; a warehouse that does
not exist yet gives a page that says what to run first. Nothing here writes to the warehouse.
Where the warehouse is may carry credentials (a catalog's URI): it is said only through `redact`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb

from shipsync.errors import WarehouseError
from shipsync.redaction import redact
from shipsync.report.model import Chart, ChartOutcome, ReportResult, Section, Windows
from shipsync.report.page import render_page
from shipsync.report.queries import CLOCKS
from shipsync.report.sections import SECTIONS
from shipsync.report.tariff import NO_RATES, Tariff
from shipsync.report.window import Window, clock_window, minute
from shipsync.safe_files import make_folders, write_bytes
from shipsync.warehouse.unit_of_work import open_warehouse
from shipsync.warehouse_location import LakeLocation

MAX_DAYS = 3660  # the longest window `shipsync report --days` takes
FIRST_STEPS = (
    "Nothing to show yet: run `shipsync pull all` to fill the warehouse (and `shipsync events load` once webhooks "
    "are registered), then build the report again. `shipsync demo` shows it all with the local sandbox."
)


def _relations(con: duckdb.DuckDBPyConnection) -> set[str]:
    rows = con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_catalog = current_database() AND table_schema = current_schema()"
    ).fetchall()
    return {str(r[0]) for r in rows}


def _has_rows(con: duckdb.DuckDBPyConnection, table: str, cache: dict[str, bool]) -> bool:
    if table not in cache:
        cache[table] = con.execute(f'SELECT EXISTS (SELECT 1 FROM "{table}")').fetchone() == (True,)
    return cache[table]


def _newest(con: duckdb.DuckDBPyConnection, sql: str, reads: Sequence[str], relations: set[str], window: Window) -> datetime | None:
    """The one moment `sql` selects (a newest moment), or None: no rows, or tables this warehouse lacks."""
    if not sql or any(name not in relations for name in reads):
        return None
    try:
        found = con.execute(window.runnable(sql)).fetchone()
    except duckdb.Error:  # a file of another version: the chart itself says so
        return None
    return found[0] if found and isinstance(found[0], datetime) else None


def _empty(con: duckdb.DuckDBPyConnection, chart: Chart, window: Window, relations: set[str]) -> str:
    """Why a chart has no rows in its window, and where its newest row is, with the option that reaches it."""
    said = chart.empty.format(window=window.described())
    query = chart.query
    if not query.newest:
        return said
    newest = _newest(con, query.newest, query.reads, relations, window)
    if newest is None:
        return f"{said} The warehouse holds none at all yet."
    days = math.floor((window.as_of - newest) / timedelta(days=1)) + 1  # the window starts just after `since`
    reachable = days <= MAX_DAYS  # a window `--days` can take
    if query.clock == "fleet" and (newest > window.as_of or newest <= window.since):
        reach = f"`--as-of {newest:%Y-%m-%d}`" + (f" or `--days {days}`" if newest <= window.since and reachable else "")
        return f"{said} The newest is from {minute(newest)}: {reach} shows it."
    if newest <= window.since:
        reach = f": `--days {days}` shows it" if reachable else ""
        return f"{said} The newest is from {minute(newest)}{reach}."
    return said


def _chart(con: duckdb.DuckDBPyConnection, chart: Chart, window: Window, relations: set[str], filled: dict[str, bool]) -> ChartOutcome:
    query = chart.query
    sql = query.runnable(window)
    absent = [name for name in query.reads if name not in relations]
    if absent:
        return ChartOutcome(
            chart,
            sql,
            "missing",
            message=f"This warehouse has no {', '.join(absent)} yet: run `{query.filled_by}` with this version of shipsync.",
        )
    if not _has_rows(con, query.source, filled):
        return ChartOutcome(chart, sql, "missing", message=f"{query.source} is empty: run `{query.filled_by}` to fill it.")
    try:
        result = con.execute(sql)
    except duckdb.Error as exc:  # a file of another version whose view lacks a column, say
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        message = f"This warehouse cannot answer this chart ({first}): run `{query.filled_by}` with this version of shipsync."
        return ChartOutcome(chart, sql, "missing", message=message)
    names = [d[0] for d in result.description or []]
    rows = [dict(zip(names, values, strict=True)) for values in result.fetchall()]
    if not rows:
        return ChartOutcome(chart, sql, "empty", message=_empty(con, chart, window, relations))
    return ChartOutcome(chart, sql, "drawn", html=chart.draw(chart, rows, window), rows=len(rows))


def collect(
    location: LakeLocation,
    *,
    days: int,
    now: datetime,
    quarantine: Path,
    as_of: datetime | None = None,
    tariff: Tariff = NO_RATES,
    sections: Sequence[Section] = SECTIONS,
) -> tuple[list[ChartOutcome], str, Windows]:
    """Every chart's outcome, the first-steps message when the warehouse has nothing at all, and
    the window of each clock (see `report.window`)."""
    charts = [chart for section in sections for chart in section.charts]
    provisional = Window(now, days, quarantine, now, tariff=tariff)
    with ExitStack() as stack:
        try:
            con = stack.enter_context(open_warehouse(location, read_only=True)).con
        except WarehouseError:
            windows = {c.name: clock_window(c, None, days=days, now=now, quarantine=quarantine, as_of=as_of, tariff=tariff) for c in CLOCKS}
            outcomes = [
                ChartOutcome(
                    c, c.query.runnable(windows[c.query.clock]), "missing", message=f"No warehouse yet: run `{c.query.filled_by}` first."
                )
                for c in charts
            ]
            return outcomes, f"No warehouse at {redact(location.describe())} yet. " + FIRST_STEPS, windows
        con.execute("SET TimeZone = 'UTC'")  # times on the page read in UTC, as the SQL's days are
        relations = _relations(con)
        windows = {
            clock.name: clock_window(
                clock,
                _newest(con, clock.newest, clock.reads, relations, provisional),
                days=days,
                now=now,
                quarantine=quarantine,
                as_of=as_of,
                tariff=tariff,
            )
            for clock in CLOCKS
        }
        filled: dict[str, bool] = {}
        outcomes = [_chart(con, chart, windows[chart.query.clock], relations, filled) for chart in charts]
    nothing = all(o.state == "missing" for o in outcomes)
    return outcomes, FIRST_STEPS if nothing else "", windows


def build_report(
    location: LakeLocation,
    output: Path,
    *,
    spool: Path,
    days: int = 30,
    as_of: datetime | None = None,
    now: datetime | None = None,
    tariff: Tariff = NO_RATES,
) -> ReportResult:
    """Write the report of the warehouse at `location` to `output`: `days` of history up to each
    clock's as-of (the fleet's is `as_of` when given; see `report.window`); `now` is the machine's
    clock; `spool` is the webhook spool (its quarantine is charted); `tariff` the daily rates that
    demurrage and detention are projected with."""
    started = time.perf_counter()
    now = now or datetime.now(UTC)
    outcomes, first_steps, windows = collect(location, days=days, now=now, quarantine=spool / "quarantine", as_of=as_of, tariff=tariff)
    html = render_page(SECTIONS, outcomes, windows, first_steps, datetime.now(UTC))
    output = Path(output)
    make_folders(output.parent)
    write_bytes(output, redact(html).encode("utf-8"))  # a file meant for sharing: no credential on it
    return ReportResult(output, location.describe(), time.perf_counter() - started, outcomes, first_steps, windows)
