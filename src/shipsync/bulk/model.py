"""The vocabulary of a bulk run: problems found, changes planned, and their outcomes."""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Any, Literal

from shipsync.bulk.cells import Cell, cell_text

SHOWN_VALUE = 200  # characters of a cell quoted in a problem's description

Action = Literal["create", "update", "delete", "skip"]
# applied: written; unchanged: already so; rejected: invalid, never sent; failed: the service
# refused it; unknown: sent, outcome not known (reconciled by the next run); planned: dry run.
Status = Literal["applied", "unchanged", "rejected", "failed", "unknown", "planned"]
# What a change writes: a custom field value (on the entity named by entity_type/entity_id), a
# shipment's tags or ref_numbers, a tracking request's ref_number, a definition, or an option.
Target = Literal["custom_field", "shipment", "tracking_request", "definition", "option"]
# What a spreadsheet holds, as `shipsync apply KIND` names it.
Kind = Literal["tracking-requests", "custom-field-definitions", "custom-fields"]


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
    """One write decided from one row (one field of it, for custom fields)."""

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
    payload: dict[str, Any] = dataclass_field(default_factory=dict)  # what to send, beyond `after`
    target: Target = "custom_field"


def skipped(row: int, entity_type: str, entity_id: str, field: str, target: Target, resource_id: str | None = None) -> Change:
    """A row (or field) that asks for what is already so."""
    return Change(row, entity_type, entity_id, field, "skip", resource_id=resource_id, status="unchanged", target=target)
