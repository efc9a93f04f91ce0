"""The vocabulary of a bulk run: problems found, changes planned, their outcomes, and the
before-images an undo reverses."""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Any, Literal

from shipsync.bulk.cells import Cell, cell_text

SHOWN_VALUE = 200  # characters of a cell quoted in a problem's description

Action = Literal["create", "update", "delete", "skip"]
WRITE_ACTIONS: tuple[Action, ...] = ("create", "update", "delete")
# applied: written; unchanged: already so; rejected: invalid, never sent; failed: the service
# refused it; unknown: sent, outcome not known (reconciled by the next run); planned: dry run;
# skipped: an undo left it alone, changed at the service since the run it undoes.
Status = Literal["applied", "unchanged", "rejected", "failed", "unknown", "planned", "skipped"]
# What a spreadsheet holds, as `shipsync apply KIND` names it: `bulk.kinds` declares each.
KindName = str


def apply_flow(kind: str) -> str:
    """The ledger's name of a kind's runs, and its Prefect flow's: `apply_<kind>`, dashes as underscores."""
    return f"apply_{kind.replace('-', '_')}"


@dataclass(slots=True)
class Problem:
    """One reason a row (or a cell of it) cannot be applied."""

    row: int
    column: str
    value: Cell
    reason: str

    def describe(self) -> str:
        text = cell_text(self.value)
        if len(text) > SHOWN_VALUE:  # an amplified cell must not amplify every report of it
            text = f"{text[:SHOWN_VALUE]}... ({len(text):,} characters)"
        shown = f" {text!r}" if text and repr(text) not in self.reason else ""
        return f"row {self.row}, column {self.column}:{shown} {self.reason}"


@dataclass(slots=True)
class Change:
    """One write decided from one row (one field of it, for custom fields). What `entity_type`,
    `field` and `payload` hold is the business of the kind that plans and writes it."""

    row: int
    entity_type: str
    entity_id: str
    field: str
    action: Action
    before: Any = None
    after: Any = None
    resource_id: str | None = None  # the custom field / shipment / tracking request / definition / option written
    status: Status = "planned"
    detail: str = ""
    payload: dict[str, Any] = dataclass_field(default_factory=dict)  # what to send beyond `after`, and what the answer said
    # What the change was read from: one cell (`read`, in `column`, else the column named `field`)
    # whose value `after` is, or several (`readings`: column, cell, the value sent for it).
    read: Cell | None = None
    column: str | None = None
    readings: tuple[tuple[str, Cell, Any], ...] = ()
    says: str = ""  # the outcome in words, where the kind says it better than `action status` (`stopped`)


def skipped(row: int, entity_type: str, entity_id: str, field: str, resource_id: str | None = None, detail: str = "") -> Change:
    """A row (or field) that asks for what is already so."""
    return Change(row, entity_type, entity_id, field, "skip", resource_id=resource_id, status="unchanged", detail=detail)


@dataclass(frozen=True)
class UndoImage:
    """One applied write as `bulk_undo` keeps it: what undo reverses (`before` and `after` parsed)."""

    seq: int
    entity_type: str
    entity_id: str
    field: str
    action: Action
    resource_id: str | None
    before: Any
    after: Any
