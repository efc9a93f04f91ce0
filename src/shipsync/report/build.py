"""Building the report: run each chart's query on the warehouse (read-only), draw what came back,
and write the page in one go (a file is either the whole new report or the previous one), through
`shipsync.safe_files` (a link planted at the page's name or beside it is never followed).

A chart whose tables are missing or empty says which command fills them; a warehouse that does
not exist yet gives a page that says what to run first. Nothing here writes to the warehouse.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from shipsync.report.model import Chart, ChartOutcome, ReportResult, Section
from shipsync.report.page import render_page
from shipsync.report.sections import SECTIONS
from shipsync.report.window import Window
from shipsync.safe_files import make_folders, write_bytes
from shipsync.warehouse.connection import connect

FIRST_STEPS = (
    "Nothing to show yet: run `shipsync pull all` to fill the warehouse (and `shipsync events load` once webhooks "
    "are registered), then build the report again. `shipsync demo` shows it all with the local sandbox."
)


def _relations(con: duckdb.DuckDBPyConnection) -> set[str]:
    rows = con.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'").fetchall()
    return {str(r[0]) for r in rows}


def _has_rows(con: duckdb.DuckDBPyConnection, table: str, cache: dict[str, bool]) -> bool:
    if table not in cache:
        cache[table] = con.execute(f'SELECT EXISTS (SELECT 1 FROM "{table}")').fetchone() == (True,)
    return cache[table]


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
        return ChartOutcome(chart, sql, "empty", message=chart.empty)
    return ChartOutcome(chart, sql, "drawn", html=chart.draw(chart, rows, window), rows=len(rows))


def collect(warehouse: Path, window: Window, sections: Sequence[Section] = SECTIONS) -> tuple[list[ChartOutcome], str]:
    """Every chart's outcome, and the first-steps message when the warehouse has nothing at all."""
    charts = [chart for section in sections for chart in section.charts]
    if not warehouse.exists():
        outcomes = [
            ChartOutcome(c, c.query.runnable(window), "missing", message=f"No warehouse yet: run `{c.query.filled_by}` first.")
            for c in charts
        ]
        return outcomes, f"No warehouse at {warehouse} yet. " + FIRST_STEPS
    with connect(warehouse, read_only=True) as con:
        con.execute("SET TimeZone = 'UTC'")  # times on the page read in UTC, as the SQL's days are
        relations = _relations(con)
        filled: dict[str, bool] = {}
        outcomes = [_chart(con, chart, window, relations, filled) for chart in charts]
    nothing = all(o.state == "missing" for o in outcomes)
    return outcomes, FIRST_STEPS if nothing else ""


def build_report(
    warehouse: Path, output: Path, *, days: int = 30, as_of: datetime | None = None, spool: Path | None = None
) -> ReportResult:
    """Write the report of `warehouse` to `output`; `days` of history up to `as_of` (now)."""
    started = time.perf_counter()
    warehouse = Path(warehouse)
    window = Window(as_of or datetime.now(UTC), days, (spool or warehouse.parent / "spool") / "quarantine")
    outcomes, first_steps = collect(warehouse, window)
    html = render_page(SECTIONS, outcomes, window, warehouse, first_steps, datetime.now(UTC))
    output = Path(output)
    make_folders(output.parent)
    write_bytes(output, html.encode("utf-8"))
    return ReportResult(output, warehouse, time.perf_counter() - started, outcomes, first_steps)
