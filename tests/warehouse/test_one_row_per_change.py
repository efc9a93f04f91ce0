"""The change feed as docs/analysts.md explains it: `table_changes` gives row images (several
update pairs for a row several runs changed, a delete and an insert for a replaced row), and the
query the page shows collapses them to one row per container and change, in `shipsync sql` too."""

from __future__ import annotations

import re
from pathlib import Path

from shipsync.warehouse.read_only_sql import read_only_prompt
from support.lake import analyst, location, sql_now

ANALYSTS_PAGE = Path(__file__).resolve().parents[2] / "docs" / "analysts.md"


def documented_query() -> str:
    found = re.search(r"<!-- tested: one row per change -->\n```sql\n(.*?)```", ANALYSTS_PAGE.read_text(), re.DOTALL)
    assert found, "docs/analysts.md lost its change-feed query"
    return found.group(1)


def newest_snapshot(where: Path) -> int:
    with analyst(where) as con:
        row = con.execute("SELECT max(snapshot_id) FROM ducklake_snapshots(?)", [con.alias]).fetchone()
    assert row is not None
    return int(row[0])


def test_the_documented_query_gives_one_row_per_container_and_change(tmp_path: Path) -> None:
    lake = tmp_path / "warehouse"
    sql_now(lake, "INSERT INTO containers (id, number) VALUES ('a', 'A1'), ('b', 'B1'), ('c', 'C1')")
    first = newest_snapshot(lake) + 1
    for step in (
        "UPDATE containers SET number = 'A2' WHERE id = 'a'",  # two runs update one row: two pairs
        "UPDATE containers SET number = 'A3' WHERE id = 'a'",
        "DELETE FROM containers WHERE id = 'b'",
        "INSERT INTO containers (id, number) VALUES ('d', 'D1')",  # made and deleted within the range
        "DELETE FROM containers WHERE id = 'd'",
        "DELETE FROM containers WHERE id = 'c'; INSERT INTO containers (id, number) VALUES ('c', 'C2'), ('e', 'E1')",  # replaced
    ):
        sql_now(lake, step)
    last = newest_snapshot(lake)

    with analyst(lake) as con:
        images = con.execute(
            "SELECT id, change_type FROM table_changes('containers', ?, ?) ORDER BY snapshot_id, id, change_type", [first, last]
        ).fetchall()
    assert images.count(("a", "update_preimage")) == 2 and images.count(("a", "update_postimage")) == 2
    assert ("c", "delete") in images and ("c", "insert") in images and ("d", "insert") in images

    with read_only_prompt(location(lake)) as prompt:
        columns, rows = prompt.run(f"SET VARIABLE first = {first}; SET VARIABLE last = {last}; {documented_query()}")
    number = columns.index("number")
    assert [(row[0], row[1], row[number]) for row in rows] == [
        ("deleted", "b", None),
        ("inserted", "e", "E1"),
        ("updated", "a", "A3"),
        ("updated", "c", "C2"),
    ]
