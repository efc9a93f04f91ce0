"""A new lake's tables are empty and yet have their statistics in the catalog (`table_stats`): an
empty table without them is read at one catalog query per column on every query (DuckLake 1.5.5)."""

from __future__ import annotations

from pathlib import Path

from shipsync.warehouse.identifiers import ident
from shipsync.warehouse.schema import tables
from shipsync.warehouse.unit_of_work import open_warehouse
from support.lake import analyst, location


def test_a_new_lakes_tables_are_empty_with_statistics(tmp_path: Path) -> None:
    with open_warehouse(location(tmp_path / "warehouse")):
        pass  # a writer's open creates the tables
    declared = {t.name for t in tables()}
    with analyst(tmp_path / "warehouse") as con:
        catalog = f"__ducklake_metadata_{con.alias}"
        with_statistics = {
            name
            for (name,) in con.execute(
                f"SELECT t.table_name FROM {catalog}.ducklake_table t JOIN {catalog}.ducklake_table_stats s USING (table_id) "
                "WHERE t.end_snapshot IS NULL"
            ).fetchall()
        }
        rows = {name: con.execute(f"SELECT count(*) FROM {ident(name)}").fetchone() for name in declared - {"_shipsync_schema"}}
        (schema_snapshot,) = con.execute("SELECT max(snapshot_id) FROM ducklake_snapshots(?)", [con.alias]).fetchone() or (None,)
        changed = con.execute("SELECT count(*) FROM table_changes('terminals', ?, ?)", [schema_snapshot, schema_snapshot]).fetchone()
    assert with_statistics == declared
    assert {name: count for name, count in rows.items() if count != (0,)} == {}
    assert changed == (0,)  # the row that gave the statistics is in no change feed
