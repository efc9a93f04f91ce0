"""What a kind of spreadsheet is (`BulkKind`): one type that plans its rows, writes its changes,
reflects them into the warehouse and reverses them, and what a kind may ask the service for
before it plans (`RefreshRequest`).

The machinery every kind shares is written once: reading the file (`reader`), refreshing and
planning in rounds, the dry run and the writes (`apply`, `execute`), the results log and file
(`record`, `results_file`), the reflection (`reflect`) and the undo ledger (`undo`). A kind holds
only what is its own.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

import duckdb

from shipsync.api import AsyncShipsyncClient
from shipsync.bulk.cells import cell_text
from shipsync.bulk.lookup import Knowledge
from shipsync.bulk.model import Change, KindName, Problem, UndoImage, apply_flow
from shipsync.bulk.read_values import ValueScope
from shipsync.bulk.reader import Sheet
from shipsync.bulk.reflect import Reflection
from shipsync.pull.resources import PULLED_BY_NAME
from shipsync.warehouse.ledger import changed_since


@dataclass(frozen=True)
class Scope:
    """What of the warehouse a kind reads: entities by natural key, tracking requests and shipments,
    the shipping lines."""

    entities: bool = False
    tracking: bool = False
    lines: bool = False


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
    shipping_lines: bool = False  # the carriers the service tracks with (one request)
    parties: bool = False  # the account's parties (customers): not kept in the warehouse, handed to the plan


class BulkKind(Protocol):
    name: KindName  # its runs' name in the ledger follows (`model.apply_flow`)
    scope: Scope
    undoable: bool  # whether its applied writes keep before-images that `apply undo` reverses

    # Planning.
    def check_structure(self, sheet: Sheet) -> None:
        """Header checks that need no service data (key columns, allowed columns): InputError if bad."""

    def refresh_request(self, con: duckdb.DuckDBPyConnection, sheet: Sheet, known: Knowledge, round_number: int) -> RefreshRequest | None:
        """What to re-read in this round (0, 1, ...) given what is known so far (`con`: the warehouse,
        for the ledger); None when done."""

    def check_headers(self, sheet: Sheet, known: Knowledge) -> None:
        """Header checks against what the service knows (e.g. column names are definitions)."""

    def plan(self, sheet: Sheet, known: Knowledge, *, clear_empty: bool) -> tuple[list[Change], list[Problem]]:
        """Every change the file asks for, and every reason a row or cell cannot be applied."""

    # Writing.
    def phase(self, change: Change) -> int:
        """When the change is written: every change of phase 0 before any of phase 1, and so on."""

    async def write(self, client: AsyncShipsyncClient, change: Change) -> None:
        """Send one change; what the service answered goes into `change.payload` for `reflect`.
        An ApiError says it was refused (or its outcome is unknown)."""

    # Reflecting.
    def reflect(self, applied: Sequence[Change], into: Reflection) -> None:
        """What the applied changes (accepted by the service) changed in the warehouse's copy."""

    # Reversing.
    def undo_refresh(self, images: Sequence[UndoImage], known: Knowledge, round_number: int) -> RefreshRequest | None:
        """What to read from the service in this round (0, 1, ...) before `reverse` compares the
        images with the present; None when done."""

    def reverse(self, images: Sequence[UndoImage], known: Knowledge) -> list[Change]:
        """The changes that put back what `images` (newest first) record, judged against the
        service's present values in `known` (see `present`): a write where the present is the
        image's after-image, `unchanged` where it is its before-image, `skipped` otherwise. Each
        change's row is its image's place in that order (from 1)."""


def tracking_since(con: duckdb.DuckDBPyConnection) -> str | None:
    """Tracking requests changed since the last complete read of them (a pull, or an apply that
    reads them the same way), with overlap."""
    return changed_since(con, PULLED_BY_NAME["tracking-requests"].flow, apply_flow("tracking-requests"), apply_flow("new-tracking"))


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
