"""What every bulk kind provides (`Planner`), and what a planner may ask the service for before it
plans (`RefreshRequest`). `apply.py` runs any planner the same way: check the header, refresh in
rounds until the planner asks for nothing more, then plan against what the warehouse now knows."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

import duckdb

from shipsync.bulk.cells import cell_text
from shipsync.bulk.lookup import Knowledge
from shipsync.bulk.model import Change, Kind, Problem
from shipsync.bulk.read_values import ValueScope
from shipsync.bulk.reader import Sheet
from shipsync.warehouse.ledger import apply_flows, changed_since


@dataclass(frozen=True)
class Scope:
    """What of the warehouse a planner reads: entities by natural key, tracking requests and shipments."""

    entities: bool = False
    tracking: bool = False


@dataclass(frozen=True)
class RefreshRequest:
    """What to re-read from the service into the warehouse before planning."""

    definitions: bool = False
    custom_fields: bool = False  # every value of the account
    values: ValueScope | None = None  # the values of these entities and fields, by the cheapest route
    tracking_requests: bool = False
    tracking_since: str | None = None
    request_numbers: Sequence[str] = ()
    shipment_ids: Sequence[str] = ()


class Planner(Protocol):
    kind: Kind
    scope: Scope

    def check_structure(self, sheet: Sheet) -> None:
        """Header checks that need no service data (key columns, allowed columns): InputError if bad."""

    def refresh_request(self, con: duckdb.DuckDBPyConnection, sheet: Sheet, known: Knowledge, round_number: int) -> RefreshRequest | None:
        """What to re-read in this round (0, 1, ...) given what is known so far (`con`: the warehouse,
        for the ledger); None when done."""

    def check_headers(self, sheet: Sheet, known: Knowledge) -> None:
        """Header checks against what the service knows (e.g. column names are definitions)."""

    def plan(self, sheet: Sheet, known: Knowledge, *, clear_empty: bool) -> tuple[list[Change], list[Problem]]:
        """Every change the file asks for, and every reason a row or cell cannot be applied."""


def tracking_since(con: duckdb.DuckDBPyConnection) -> str | None:
    """Tracking requests changed since the last read of them (a pull or an apply), with overlap."""
    return changed_since(con, "pull_tracking_requests", *apply_flows("tracking-requests"))


def unresolved_numbers(sheet: Sheet, column: str, known: Knowledge) -> list[str]:
    """Request numbers in `column` the warehouse cannot resolve to a tracking request yet."""
    if column not in sheet.headers:
        return []
    index = sheet.headers.index(column)
    cells = {cell_text(row[index]).strip() for row in sheet.rows if index < len(row)}
    return sorted(c for c in cells if c and c.upper() not in known.tracking_by_number)


def rows_of(sheet: Sheet, problems: list[Problem]) -> Iterator[tuple[int, dict[str, str]]]:
    """Each well-formed row as (row number, {column: cell text}); a ragged row is a problem instead.
    Kinds read through here take every cell as text (a number cell 42 is `42`)."""
    for cells, number in zip(sheet.rows, sheet.row_numbers, strict=True):
        if number in sheet.ragged:
            problems.append(Problem(number, "(row)", "", sheet.ragged[number]))
            continue
        yield number, dict(zip(sheet.headers, map(cell_text, cells), strict=True))
