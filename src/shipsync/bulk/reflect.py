"""What the warehouse learns from applied writes, staged with the run that records them.

Each kind says what its writes taught (`BulkKind.reflect`) into a `Reflection`: rows as the
service answered them, updates of columns a write changed, ids it deleted. The reflection then
stages them in the run's warehouse in one go, so they commit with the run's results: updates of the
same columns of a table become one statement over a staged table, not one statement per write (in
a lake each statement costs catalog round trips and a delete file).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import count
from typing import Any

import duckdb
import pyarrow as pa

from shipsync.api.jsonapi import JsonObject
from shipsync.warehouse.declared_rows import Batch, observed_now
from shipsync.warehouse.identifiers import ident
from shipsync.warehouse.load import write_batch
from shipsync.warehouse.normalize import merge
from shipsync.warehouse.unit_of_work import CommitContext, Warehouse
from shipsync.warehouse.upsert import sql_types

# A row a write changed holds, for that member, the state after the write: its freshness stamp
# moves to the reflection's time, so that a delivery sent before the write (loaded later) cannot put
# the old value back. The row's other members are then taken as that new too: a delivery from before
# the write that changed one of them is refused, and the next pull or delivery brings it.
STAMPED = "observed_at = greatest(coalesce(t.observed_at, CAST($stamp AS TIMESTAMPTZ)), CAST($stamp AS TIMESTAMPTZ))"


@dataclass
class _Updates:
    """Updates of the same columns of one table, matched the same way: one statement at commit."""

    table: str
    column: str  # the target's column the key is matched against
    key_of: str  # SQL giving that column's value from the staged row `s` (its `key`)
    columns: tuple[str, ...]
    rows: list[dict[str, Any]] = field(default_factory=list)

    def statement(self, staged: str) -> str:
        # One source row per target: of several updates reaching the same row, the last given wins,
        # as it would had each run as its own statement in turn.
        last = "QUALIFY row_number() OVER (PARTITION BY _target ORDER BY _seq DESC) = 1"
        newest = f"SELECT *, {self.key_of} AS _target FROM {staged} AS s {last}"
        sets = ", ".join([*(f"{ident(c)} = s.{ident(c)}" for c in self.columns), STAMPED])
        return f"UPDATE {ident(self.table)} AS t SET {sets} FROM ({newest}) AS s WHERE t.{ident(self.column)} = s._target"


def answered(raw: JsonObject, sent: dict[str, Any]) -> JsonObject:
    """The resource the service answered, with what was sent wherever its answer is silent (a
    member absent or null): the write happened, so that is what the service now holds."""
    attributes = raw.get("attributes")
    attributes = dict(attributes) if isinstance(attributes, dict) else {}
    for name, value in sent.items():
        if attributes.get(name) is None:
            attributes[name] = value
    return {**raw, "attributes": attributes}


class Reflection:
    """What a batch of applied writes changed in the warehouse's copy, gathered, then staged."""

    def __init__(self) -> None:
        self.observed_at = observed_now()  # after the writes: what they answered is the newest state
        self._batch: Batch = {}
        self._updates: dict[tuple[str, str, str, tuple[str, ...]], _Updates] = {}
        self._seq = count()
        self._deleted: dict[tuple[str, str], list[str]] = {}  # (table, column) -> ids

    def rows(self, batch: Batch) -> None:
        """Rows as the service answered them (made with `observed_at`), upserted."""
        merge(self._batch, batch)

    def update(self, table: str, column: str, key: str | None, values: dict[str, Any], *, key_of: str = "s.key") -> None:
        """The rows of `table` whose `column` equals `key` take `values` (column -> value) and the
        reflection's freshness stamp. With `key_of`, SQL over the staged row `s`, the column is
        matched against what it gives for `s.key` instead (e.g. a lookup in another table)."""
        columns = tuple(sorted(values))
        group = self._updates.setdefault((table, column, key_of, columns), _Updates(table, column, key_of, columns))
        group.rows.append({"key": key, "_seq": next(self._seq), **values})

    def delete(self, table: str, column: str, ids: Sequence[str]) -> None:
        """Rows of `table` whose `column` is one of `ids` are gone at the service."""
        self._deleted.setdefault((table, column), []).extend(ids)

    def stage(self, warehouse: Warehouse) -> None:
        if self._batch:
            write_batch(warehouse, self._batch)
        statements: list[tuple[str, str, dict[str, Any]]] = []  # table, statement, its named parameters
        for group in self._updates.values():
            types = sql_types(group.table)
            casts = ", ".join(f"CAST({ident(c)} AS {types[c]}) AS {ident(c)}" for c in group.columns)
            select = f"SELECT CAST(key AS VARCHAR) AS key, _seq, {casts} FROM _shipsync_incoming"
            staged = warehouse.stage(f"{group.table}_updated", pa.Table.from_pylist(group.rows), select=select)
            statements.append((group.table, group.statement(staged), {"stamp": self.observed_at}))
        for (table, column), ids in self._deleted.items():
            gone = warehouse.stage(f"{table}_gone", pa.table({"id": pa.array(ids, pa.string())}))
            statements.append((table, f"DELETE FROM {ident(table)} WHERE {ident(column)} IN (SELECT id FROM {gone})", {}))
        if not statements:
            return

        def replay(con: duckdb.DuckDBPyConnection, commit: CommitContext) -> None:
            for _, sql, parameters in statements:
                con.execute(sql, parameters)

        warehouse.defer(sorted({table for table, _, _ in statements}), replay)
