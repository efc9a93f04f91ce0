"""Containers at risk of demurrage, as lines a person reads (the demo prints them; see the
`pickup_risk` view in warehouse/views)."""

from __future__ import annotations

import duckdb


def pickup_risk_lines(con: duckdb.DuckDBPyConnection, *, days: int = 3, limit: int = 10) -> list[str]:
    """One line per container at risk within `days` (most urgent first), or one line saying none is."""
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
