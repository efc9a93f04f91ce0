"""Views that read each other are created each after the views it reads, inside one transaction."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from shipsync.warehouse.catalog import write_catalog
from shipsync.warehouse.migrate import create_views, ensure_schema, views_dir
from shipsync.warehouse.view_order import create_views_in_order, in_dependency_order, view_statements
from support.lake import analyst

# Given in the reverse of the order they can be created in: top reads middle reads bottom.
REVERSED = [
    "CREATE VIEW top AS WITH bottom AS (SELECT 99 AS n) SELECT m.n + 1 AS n, b.n AS shadow FROM middle m, bottom b",
    'CREATE OR REPLACE VIEW "middle" AS SELECT n * 10 AS n FROM main.bottom WHERE n IN (SELECT n FROM base)',
    "CREATE VIEW bottom AS SELECT n FROM base",
]


def _names(statements: list[str]) -> list[str]:
    return [sql.split(" AS ", 1)[0].split()[-1].strip('"') for sql in statements]


def test_order_follows_what_each_view_reads() -> None:
    con = duckdb.connect()
    assert _names(in_dependency_order(con, REVERSED)) == ["bottom", "middle", "top"]
    # Already in order: left alone.
    assert in_dependency_order(con, list(reversed(REVERSED))) == list(reversed(REVERSED))


def test_reverse_order_is_created_in_one_transaction() -> None:
    con = duckdb.connect()
    con.execute("CREATE TABLE base AS SELECT 4 AS n")
    con.execute("BEGIN TRANSACTION")
    create_views_in_order(con, REVERSED)
    con.execute("COMMIT")
    assert con.execute("SELECT n, shadow FROM top").fetchall() == [(41, 99)]


def test_a_view_that_cannot_bind_fails_with_its_own_error() -> None:
    con = duckdb.connect()
    con.execute("CREATE TABLE base AS SELECT 4 AS n")
    con.execute("BEGIN TRANSACTION")
    with pytest.raises(duckdb.CatalogException, match="nowhere"):
        create_views_in_order(con, [*REVERSED, "CREATE VIEW broken AS SELECT * FROM nowhere"])
    con.execute("ROLLBACK")
    assert con.execute("SELECT count(*) FROM duckdb_views() WHERE NOT internal").fetchone() == (0,)


def test_views_reading_each_other_in_a_cycle_are_named() -> None:
    cycle = ["CREATE VIEW a AS SELECT * FROM b", "CREATE VIEW b AS SELECT * FROM a"]
    with pytest.raises(ValueError, match="a -> b -> a"):
        in_dependency_order(duckdb.connect(), cycle)


def test_published_catalog_takes_views_in_reverse_order(tmp_path: Path) -> None:
    con = duckdb.connect()
    statements = {"base": "CREATE VIEW base AS SELECT 4 AS n"}
    manifest = {"generation": 1, "published_at": "2026-01-01T00:00:00+00:00", "tables": {"base": {"rows": 1}}}
    target = tmp_path / "catalog.duckdb"
    write_catalog(con, target, statements, manifest, REVERSED)  # type: ignore[arg-type]
    with analyst(target) as reader:
        assert reader.execute("SELECT n FROM top").fetchall() == [(41,)]


def test_the_analyst_views_are_created_whatever_their_file_order() -> None:
    """The shipped views, from scratch and in reverse file order, all bind in one transaction."""
    con = duckdb.connect()
    ensure_schema(con)
    shipped = [str(name) for (name,) in con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()]
    for name in shipped:
        con.execute(f'DROP VIEW IF EXISTS "{name}" CASCADE')
    statements = [sql for sql_file in sorted(views_dir().glob("*.sql")) for sql in view_statements(sql_file.read_text())]
    con.execute("BEGIN TRANSACTION")
    create_views_in_order(con, list(reversed(statements)))
    con.execute("COMMIT")
    created = {str(name) for (name,) in con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()}
    assert created == set(shipped) and "pickup_risk" in created
    create_views(con)  # and again over themselves, as each migration does
    assert con.execute("SELECT count(*) FROM pickup_risk").fetchone() == (0,)
