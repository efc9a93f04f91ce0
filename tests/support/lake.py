"""A test's warehouse as analysts and runs see it: a read-only connection to the lake in a folder,
and a run that writes rows directly (committed as one snapshot, as every run is)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb

from shipsync.config import Settings
from shipsync.warehouse.lake import LakeConnection, connect_lake
from shipsync.warehouse.unit_of_work import CommitMessage, Warehouse, open_warehouse
from shipsync.warehouse_location import LakeLocation, lake_location

Where = Path | str | Settings | LakeLocation


def location(where: Where) -> LakeLocation:
    if isinstance(where, LakeLocation):
        return where
    if isinstance(where, Settings):
        return where.lake
    return lake_location(str(where))


class Analyst:
    """A read-only connection to a test's lake, closed (and the lake detached) by `close` or `with`."""

    def __init__(self, where: Where) -> None:
        self._lake: LakeConnection = connect_lake(location(where), read_only=True)
        self.alias = self._lake.alias

    def __getattr__(self, name: str) -> Any:
        return getattr(self._lake.con, name)

    def execute(self, sql: str, parameters: Any = None) -> duckdb.DuckDBPyConnection:
        return self._lake.con.execute(sql, parameters)

    def sql(self, sql: str, **kwargs: Any) -> duckdb.DuckDBPyRelation:
        return self._lake.con.sql(sql, **kwargs)

    def close(self) -> None:
        self._lake.close()

    def __enter__(self) -> Analyst:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def analyst(where: Where) -> Analyst:
    return Analyst(where)


def fetch(where: Where, sql: str, parameters: Any = None) -> list[tuple[Any, ...]]:
    """The rows of one query on a test's lake, read as an analyst reads them (its own connection)."""
    with analyst(where) as con:
        return con.execute(sql, parameters).fetchall()


@contextmanager
def written(where: Where, flow: str = "test") -> Iterator[Warehouse]:
    """A warehouse to stage writes on; committed as one snapshot when the block ends."""
    with open_warehouse(location(where)) as warehouse:
        yield warehouse
        warehouse.commit(CommitMessage(flow, str(uuid.uuid4())))


def write_now(where: Where, batch: Any, *, link_owners: Any = None) -> dict[str, Any]:
    """Stage a normalized batch and commit it as a run of its own; what the commit changed, per table."""
    from shipsync.warehouse.load import write_batch

    with open_warehouse(location(where)) as warehouse:
        write_batch(warehouse, batch, link_owners=link_owners)
        return warehouse.commit(CommitMessage("test", str(uuid.uuid4()))).counts


def sql_now(where: Where, sql: str, parameters: Any = None) -> None:
    """Run one write of a test's own (rows planted, rows aged) as a run of its own."""
    with open_warehouse(location(where)) as warehouse:
        warehouse.defer(["(test)"], lambda con, commit: con.execute(sql, parameters) and None)
        warehouse.commit(CommitMessage("test", str(uuid.uuid4())))
