"""What a change was read from and what it sends, as results files and the terminal say it:
`customs_cleared_on: read "15.03.2026", sent "2026-03-15"`.

A cell is shown as typed: text in quotes, a typed workbook cell by its kind (`a date cell
(2026-03-15)`); what is sent is shown as the JSON the service gets. Long values are cut, saying
how long they were.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import groupby
from typing import Any

from shipsync.bulk.cells import Cell, cell_kind
from shipsync.bulk.model import WRITE_ACTIONS, Change
from shipsync.json_text import dumps

SHOWN = 120  # characters of a value shown in a note


def _cut(text: str) -> str:
    return text if len(text) <= SHOWN else f"{text[:SHOWN]}... ({len(text):,} characters)"


def shown_read(cell: Cell) -> str:
    """A cell as read: `"15.03.2026"`, `an empty cell`, or a typed cell by its kind."""
    if isinstance(cell, str):
        return _cut(dumps(cell)) if cell else "an empty cell"
    return _cut(cell_kind(cell))


def shown_sent(value: Any) -> str:
    """A value as sent: its JSON."""
    return _cut(dumps(value))


def readings_of(change: Change) -> list[tuple[str, Cell, Any]]:
    """(column, cell, value sent for it) of each cell the change was read from."""
    if change.read is not None:
        return [(change.column or change.field, change.read, change.after)]
    return list(change.readings)


def verb(change: Change) -> str:
    """How the value reached the service: sent, or (a dry run's plan) would be."""
    return "would send" if change.status == "planned" else "sent"


def reading_text(column: str, cell: Cell, value: Any, sent: str, *, named: bool) -> str:
    """`read "15.03.2026", sent "2026-03-15"` (`named`: with the column, for a change of several)."""
    where = f"{column} " if named else ""
    return f"read {where}{shown_read(cell)}, {sent} {shown_sent(value)}"


def readings_text(change: Change) -> str:
    """Every cell the change was read from, and what was sent for it; empty for a change that
    sends nothing or was read from no cell."""
    if change.action not in WRITE_ACTIONS:
        return ""
    found = readings_of(change)
    named = len(found) > 1 or bool(found and found[0][0] != change.field)
    parts = []
    # Cells in a row that made one value (a list from tags_add and tags_remove, rules from `required`
    # and `max_length`) are read together, and the value shown once.
    for _, run in groupby(found, key=lambda reading: dumps(reading[2])):
        cells = list(run)
        read = ", ".join(f"{column} {shown_read(cell)}" if named else shown_read(cell) for column, cell, _ in cells)
        parts.append(f"read {read}, {verb(change)} {shown_sent(cells[0][2])}")
    return ", ".join(parts)


def first_readings(changes: Sequence[Change], columns: int = 10) -> list[tuple[str, str]]:
    """The first cell of each column (at most `columns`) that a write was read from: (column, text)."""
    found: dict[str, str] = {}
    for change in changes:
        if change.action not in WRITE_ACTIONS or change.status not in ("applied", "planned", "failed", "unknown"):
            continue
        for column, cell, value in readings_of(change):
            if column not in found:
                found[column] = reading_text(column, cell, value, verb(change), named=False)
        if len(found) >= columns:
            break
    return list(found.items())[:columns]


def cell_note(change: Change) -> str:
    """One change as its row's detail says it: `po_number: create applied, read "PO-1", sent "PO-1"`;
    `tracking: stopped`."""
    text = f"{change.field}: {change.says or f'{change.action} {change.status}'}"
    if change.detail:
        text += f" ({change.detail})"
    if shown := readings_text(change):
        text += f", {shown}"
    return text


def change_detail(change: Change) -> str:
    """What `bulk_results.detail` says of a change: its outcome in words, its detail, what it read and sent."""
    return ", ".join(part for part in (change.says, change.detail, readings_text(change)) if part)
