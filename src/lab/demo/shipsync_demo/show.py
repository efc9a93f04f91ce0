"""What `shipsync demo` prints: its console, the flow runs it made, every table's row count, a few
analyst queries and the containers at risk, each read from the warehouse through one read-only
connection (as an analyst's session: each query sees the newest snapshot when it starts)."""

from __future__ import annotations

import sys
from typing import Any

import duckdb
from rich.console import Console
from rich.table import Table

from shipsync.cli.common import line
from shipsync.warehouse.identifiers import ident, literal
from shipsync_demo.embedded_prefect import FlowRunSeen

console = Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 140)
TABLES = (
    "SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE' AND table_catalog = current_database() "
    "AND table_schema = current_schema() AND table_name NOT LIKE '\\_%' ESCAPE '\\' ORDER BY 1"
)
ANALYST_QUERIES = {
    "Containers by port of discharge": """
        SELECT pod_locode AS port, pod_metro_area AS name, count(*) AS containers
        FROM container_status GROUP BY ALL ORDER BY containers DESC LIMIT 5""",
    "Documents by type": "SELECT effective_document_type AS type, count(*) AS documents FROM document_overview GROUP BY 1 ORDER BY 2 DESC",
    "Latest milestone of five containers": """
        SELECT container_number, bill_of_lading, event, strftime(event_at, '%Y-%m-%d') AS day, locode, vessel
        FROM container_milestones QUALIFY row_number() OVER (PARTITION BY container_id ORDER BY event_at DESC) = 1
        ORDER BY container_number LIMIT 5""",
    "Custom field values by field": "SELECT api_slug, count(*) AS values FROM custom_fields GROUP BY 1 ORDER BY 2 DESC LIMIT 6",
}


def analyst_query(con: duckdb.DuckDBPyConnection, sql: str, parameters: list[Any] | None = None) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Every read the demo makes of the warehouse (on its read-only connection): columns and rows."""
    result = con.execute(sql, parameters or [])
    return [d[0] for d in result.description or []], result.fetchall()


def pickup_risk_lines(con: duckdb.DuckDBPyConnection, *, days: int = 3, limit: int = 10) -> list[str]:
    """Containers at risk of demurrage (the view `containers_awaiting_pickup`, in warehouse/views), one
    line per container at risk within `days` (most urgent first), or one line saying none is."""
    rows = con.execute(
        "SELECT container_number, bill_of_lading, pod_locode, pickup_facility, strftime(last_free_day, '%Y-%m-%d'), risk, fee_total "
        "FROM containers_awaiting_pickup WHERE days_until_lfd <= ? OR has_holds "
        "ORDER BY days_until_lfd NULLS LAST, container_number LIMIT ?",
        [days, limit],
    ).fetchall()
    if not rows:
        return [f"no container at risk: none discharged and waiting with holds or a last free day within {days} days"]
    lines = []
    for number, bill, port, terminal, lfd, risk, fees in rows:
        where = " ".join(p for p in (port, terminal) if p)
        fee = f", fees {fees:,.2f}" if fees else ""
        lines.append(f"{number} (B/L {bill or '?'}) at {where or '?'}: last free day {lfd or 'unknown'}; {risk}{fee}")
    return lines


def show_pickup_risk(con: duckdb.DuckDBPyConnection) -> None:
    console.print("[bold]Containers at risk (pickup_risk)[/bold]")
    for risk in pickup_risk_lines(con):
        console.print(line("  ", risk))  # data: plain text, whatever a container number holds


def show_flow_runs(runs: list[FlowRunSeen]) -> None:
    table = Table("step", "flow", "flow run", "state", "seconds", "rows", "artifacts", title="Prefect flow runs")
    for run in runs:
        rows = "" if run.rows is None else f"{run.rows:,}"
        table.add_row(*map(line, (run.step, run.flow, run.name, run.state, f"{run.seconds:.1f}", rows, ", ".join(run.artifacts))))
    console.print(table)


def show_query(title: str, con: duckdb.DuckDBPyConnection, sql: str | None) -> None:
    if sql is None:  # the row count of every table
        _, names = analyst_query(con, TABLES)
        counts = [f"SELECT {literal(name)} AS table, count(*) AS rows FROM {ident(name)}" for (name,) in names]
        sql = " UNION ALL ".join(counts) + " ORDER BY 1"
    columns, rows = analyst_query(con, sql)
    table = Table(*columns, title=title)
    for row in rows:
        table.add_row(*[line("" if v is None else v) for v in row])
    console.print(table)
