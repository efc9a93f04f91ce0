"""Views that read each other are created each after the views it reads, inside one transaction."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from shipsync.warehouse.schema_create import view_sql
from shipsync.warehouse.view_order import create_views_in_order, in_dependency_order
from support.lake import analyst, written

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


def test_a_view_after_its_comments_is_ordered_too() -> None:
    commented = ["-- reads middle\n-- twice\nCREATE VIEW top AS SELECT * FROM middle", "-- the bottom\nCREATE VIEW middle AS SELECT 1 AS n"]
    assert _names([s.split("\n")[-1] for s in in_dependency_order(duckdb.connect(), commented)]) == ["middle", "top"]


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


@pytest.mark.slow
def test_the_analyst_views_are_created_whatever_their_file_order(tmp_path: Path) -> None:
    """The shipped views, dropped and created again in reverse file order, all bind in one
    transaction of the lake (the schema's creation does the same in file order)."""
    with written(tmp_path / "w") as lake:
        con = lake.con
        shipped = [str(n) for (n,) in con.execute("SELECT view_name FROM duckdb_views() WHERE database_name = ?", [lake.alias]).fetchall()]
        assert len(shipped) >= 9
        con.execute("BEGIN TRANSACTION")
        for name in shipped:
            con.execute(f'DROP VIEW IF EXISTS "{name}"')
        create_views_in_order(con, list(reversed(view_sql())))
        con.execute("COMMIT")
        created = {str(n) for (n,) in con.execute("SELECT view_name FROM duckdb_views() WHERE database_name = ?", [lake.alias]).fetchall()}
    assert created == set(shipped)
    with analyst(tmp_path / "w") as reader:
        assert reader.execute("SELECT count(*) FROM container_status").fetchone() == (0,)
