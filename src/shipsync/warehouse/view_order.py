"""Creating views that read each other: each after the views it reads, in one pass.

A CREATE VIEW binds its query at once, so a view created before the view it reads fails; inside a
transaction that failure aborts the transaction, and nothing can be retried in it. So the order is
worked out first, from what each query reads (DuckDB's own parser, `json_serialize_sql`, names the
tables of a SELECT without binding it), and every statement then runs exactly once.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import duckdb
import orjson

_CREATE_VIEW = re.compile(r'\s*CREATE\s+(?:OR\s+REPLACE\s+)?VIEW\s+(?:"((?:[^"]|"")+)"|([\w.]+))\s+AS\s+(.*)', re.IGNORECASE | re.DOTALL)


def view_statements(sql: str) -> list[str]:
    """The statements of a script (a views file may hold several), each as its own text."""
    return [statement.query for statement in duckdb.extract_statements(sql)]


_LEADING_COMMENTS = re.compile(r"^(?:\s*--[^\n]*\n)*")


def _name_and_query(sql: str) -> tuple[str, str] | None:
    found = _CREATE_VIEW.match(_LEADING_COMMENTS.sub("", sql, count=1))
    if found is None:
        return None
    quoted, bare, query = found.groups()
    name = quoted.replace('""', '"') if quoted is not None else bare.rsplit(".", 1)[-1]
    return name.lower(), query.strip().rstrip(";")


def _walk(node: object) -> Iterator[dict[str, object]]:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


def relations_read(con: duckdb.DuckDBPyConnection, query: str) -> set[str]:
    """The tables and views a SELECT names (lower case), less its own CTEs; empty if it does not parse."""
    row = con.execute("SELECT json_serialize_sql(?)", [query]).fetchone()
    tree = orjson.loads(row[0]) if row else {"error": True}
    if tree.get("error"):
        return set()
    named: set[str] = set()
    ctes: set[str] = set()
    for node in _walk(tree):
        if node.get("type") == "BASE_TABLE" and isinstance(node.get("table_name"), str):
            named.add(str(node["table_name"]).lower())
        cte_map = node.get("cte_map")
        if isinstance(cte_map, dict):
            ctes.update(str(entry["key"]).lower() for entry in cte_map.get("map", []) if isinstance(entry, dict))
    return named - ctes


def in_dependency_order(con: duckdb.DuckDBPyConnection, statements: list[str]) -> list[str]:
    """`statements` reordered so that each CREATE VIEW follows the views it reads; otherwise in the
    order given. Statements that are not a CREATE VIEW keep their place relative to each other."""
    names: dict[int, str] = {}
    reads: dict[int, set[str]] = {}
    for index, sql in enumerate(statements):
        parsed = _name_and_query(sql)
        if parsed is not None:
            names[index], query = parsed
            reads[index] = relations_read(con, query)
    by_name = {name: index for index, name in names.items()}
    ordered: list[str] = []
    state: dict[int, str] = {}  # "open" while its dependencies are placed, "done" once placed

    def place(index: int, path: list[str]) -> None:
        if state.get(index) == "done":
            return
        if state.get(index) == "open":
            raise ValueError("views read each other in a cycle: " + " -> ".join([*path, names[index]]))
        state[index] = "open"
        for read in sorted(reads.get(index, set())):
            needed = by_name.get(read)
            if needed is not None and needed != index:
                place(needed, [*path, names[index]])
        state[index] = "done"
        ordered.append(statements[index])

    for index in range(len(statements)):
        place(index, [])
    return ordered


def create_views_in_order(con: duckdb.DuckDBPyConnection, statements: list[str]) -> None:
    """Run the CREATE VIEW `statements`, each after the views it reads (one attempt each: a failure
    is the view's own error, and inside a transaction it leaves the transaction to roll back)."""
    for sql in in_dependency_order(con, statements):
        con.execute(sql)
