"""What the warehouse learns from applied writes, staged with the run that records them.

Each kind says what its writes taught (`BulkKind.reflect`) into a `Reflection`: rows as the
service answered them, updates of columns a write changed, ids it deleted. The reflection then
stages them in the run's warehouse in one go, so they commit with the run's results.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import duckdb
import pyarrow as pa

from shipsync.api.jsonapi import JsonObject
from shipsync.warehouse.declared_rows import Batch, observed_now
from shipsync.warehouse.load import write_batch
from shipsync.warehouse.normalize import merge
from shipsync.warehouse.unit_of_work import CommitContext, Warehouse

# A row a write changed holds, for that member, the state after the write: its freshness stamp
# moves to the reflection's time, so that a delivery sent before the write (loaded later) cannot put
# the old value back. The row's other members are then taken as that new too: a delivery from before
# the write that changed one of them is refused, and the next pull or delivery brings it.
STAMPED = "observed_at = greatest(coalesce(observed_at, CAST($stamp AS TIMESTAMPTZ)), CAST($stamp AS TIMESTAMPTZ))"


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
        self._updates: list[tuple[str, str, dict[str, Any]]] = []  # table, statement, its named parameters
        self._deleted: dict[tuple[str, str], list[str]] = {}  # (table, column) -> ids

    def rows(self, batch: Batch) -> None:
        """Rows as the service answered them (made with `observed_at`), upserted."""
        merge(self._batch, batch)

    def update(self, table: str, sql: str, values: dict[str, Any]) -> None:
        """A statement changing what a write changed; `$stamped` in it moves the row's freshness stamp."""
        self._updates.append((table, sql.replace("$stamped", STAMPED), {**values, "stamp": self.observed_at}))

    def delete(self, table: str, column: str, ids: Sequence[str]) -> None:
        """Rows of `table` whose `column` is one of `ids` are gone at the service."""
        self._deleted.setdefault((table, column), []).extend(ids)

    def stage(self, warehouse: Warehouse) -> None:
        if self._batch:
            write_batch(warehouse, self._batch)
        statements = list(self._updates)
        for (table, column), ids in self._deleted.items():
            gone = warehouse.stage(f"{table}_gone", pa.table({"id": pa.array(ids, pa.string())}))
            statements.append((table, f"DELETE FROM {table} WHERE {column} IN (SELECT id FROM {gone})", {}))
        if not statements:
            return

        def replay(con: duckdb.DuckDBPyConnection, commit: CommitContext) -> None:
            for _, sql, values in statements:
                con.execute(sql, values)

        warehouse.defer(sorted({table for table, _, _ in statements}), replay)
