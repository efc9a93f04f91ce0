"""The analyst views read each table once: on the lake every scan of a table costs a round of catalog
queries (its files, delete files, schema versions, inlined rows) whatever the table holds, so a view
that joins a table twice pays that round twice (docs/benchmarks.md, the views on the lake)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import orjson

from shipsync.warehouse.unit_of_work import open_warehouse
from support.lake import analyst, location

ANALYST_VIEWS = ("container_status", "pickup_risk", "port_dwell", "eta_changes", "shipment_timeline")


def _tables_scanned(node: Any, found: Counter[str]) -> Counter[str]:
    if isinstance(node, dict):
        table = node.get("extra_info", {}).get("Table")  # a scan of a table (DUCKLAKE_SCAN on the lake)
        if table:
            found[str(table)] += 1
        for child in node.get("children", []):
            _tables_scanned(child, found)
    elif isinstance(node, list):
        for child in node:
            _tables_scanned(child, found)
    return found


def _scans(warehouse: Path, views: tuple[str, ...]) -> dict[str, Counter[str]]:
    """The tables each view's plan scans, and how many times, on a new lake."""
    with open_warehouse(location(warehouse)):
        pass  # a writer's open creates the tables and views
    with analyst(warehouse) as con:
        return {
            view: _tables_scanned(orjson.loads(con.execute(f"EXPLAIN (FORMAT json) SELECT * FROM {view}").fetchall()[0][1]), Counter())
            for view in views
        }


def test_each_analyst_view_scans_each_table_once(tmp_path: Path) -> None:
    scans = _scans(tmp_path / "warehouse", ANALYST_VIEWS)
    assert all(scans.values()), scans  # the plans were read
    assert {view: {t: n for t, n in counted.items() if n > 1} for view, counted in scans.items()} == {view: {} for view in ANALYST_VIEWS}


def test_the_watch_lists_read_no_milestones(tmp_path: Path) -> None:
    """`containers_awaiting_pickup` and `pickup_risk` show no milestone nor metro area: they read
    `container_pickup`, not `container_status`, and scan neither a year of transport events nor the
    metro areas (DuckDB keeps a view's joins even when a query reads none of their columns)."""
    scans = _scans(tmp_path / "warehouse", ("containers_awaiting_pickup", "pickup_risk", "container_status"))
    assert {"transport_events", "metro_areas"} <= set(scans["container_status"])  # the plans name these tables
    for view in ("containers_awaiting_pickup", "pickup_risk"):
        assert set(scans[view]) == {"containers", "shipments", "ports", "terminals"}, (view, scans[view])
