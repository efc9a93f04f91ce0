"""The stop-tracking and resume-tracking kinds: stop or resume the service's tracking of the
shipments a spreadsheet names (`PATCH /shipments/{id}/stop_tracking`, `/resume_tracking`).

A row names its shipment by `shipment_id`, `bill_of_lading` or `request_number` (one of its
tracking requests). A key that names several shipments is refused with the candidates; a second
key column on the same row picks among them (every filled key must name the same shipment). The
shipments' current state is read from the service first: a shipment already stopped (or already
tracked) is unchanged. Undo of a stop is a resume, and of a resume a stop.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import duckdb

from shipsync.api import AsyncShipsyncClient
from shipsync.bulk.kind import RefreshRequest, Scope, rows_of, tracking_since, unresolved_numbers
from shipsync.bulk.lookup import Knowledge
from shipsync.bulk.model import Change, KindName, Problem, UndoImage, skipped
from shipsync.bulk.present import as_before
from shipsync.bulk.reader import Sheet
from shipsync.bulk.reflect import Reflection
from shipsync.bulk.suggest import closest, with_suggestions
from shipsync.errors import ApiError, InputError
from shipsync.values import ValueProblem
from shipsync.warehouse.declared_rows import declared_batch

KEY_COLUMNS = ("shipment_id", "bill_of_lading", "request_number")
STOPPED, TRACKING = "stopped", "tracking"


def shipment_candidates(column: str, key: str, known: Knowledge) -> list[str]:
    """Every shipment one key cell names."""
    if column == "shipment_id":
        return [key] if key in known.shipments else []
    if column == "bill_of_lading":
        return list(known.shipments_by_bill.get(key.upper(), []))
    tracked = (known.tracking_requests[t].get("tracked_object_id") for t in known.tracking_by_number.get(key.upper(), []))
    return list(dict.fromkeys(s for s in tracked if s))


def resolve_shipment(row: dict[str, str], known: Knowledge) -> str:
    """The one shipment every filled key column of the row names; ValueProblem says why not."""
    found: list[str] | None = None
    for column in KEY_COLUMNS:
        key = row.get(column, "").strip()
        if not key:
            continue
        candidates = shipment_candidates(column, key, known)
        if not candidates:
            raise ValueProblem(f"no shipment has the {column.replace('_', ' ')} {key} (checked the warehouse and the service)")
        found = candidates if found is None else [s for s in found if s in candidates]
        if not found:
            raise ValueProblem("the key columns name different shipments")
    if not found:
        raise ValueProblem(f"the key is empty: fill one of {', '.join(KEY_COLUMNS)}")
    if len(found) > 1:
        shown = ", ".join(f"{s} (bill of lading {known.shipments.get(s, {}).get('bill') or '?'})" for s in found[:5])
        raise ValueProblem(f"{len(found)} shipments match: {shown}; add a shipment_id or bill_of_lading column to pick one")
    return found[0]


def _state(shipment: dict[str, Any]) -> str:
    return STOPPED if shipment.get("stopped_at") is not None else TRACKING


def _stopped_how(shipment: dict[str, Any]) -> str:
    """Since when and why a shipment is stopped, as the service says: `all_containers_terminated, since 2026-03-02`."""
    since = shipment.get("stopped_at")
    moment = since.date().isoformat() if isinstance(since, datetime) else str(since or "")[:10]
    return ", ".join(part for part in (shipment.get("stopped_reason") or "", f"since {moment}" if moment else "") if part)


class TrackingSwitch:
    """Stop (`wanted` = stopped) or resume (`wanted` = tracking) the tracking of shipments."""

    scope = Scope(tracking=True)
    undoable = True

    def __init__(self, name: KindName, wanted: str) -> None:
        self.name, self.wanted = name, wanted

    # Planning.
    def check_structure(self, sheet: Sheet) -> None:
        unknown = [h for h in sheet.headers if h not in KEY_COLUMNS]
        if not any(c in sheet.headers for c in KEY_COLUMNS):
            meant = next(((h, m) for h in unknown if (m := closest(h, KEY_COLUMNS))), None)
            hint = f" (is {meant[0]} meant to be {meant[1]}?)" if meant else ""
            raise InputError(f"{sheet.file}: no key column{hint}; add one of {', '.join(KEY_COLUMNS)}")
        if unknown:
            named = with_suggestions(unknown, KEY_COLUMNS)
            raise InputError(f"{sheet.file}: unknown column(s) {named}; {self.name} takes {', '.join(KEY_COLUMNS)}")

    def check_headers(self, sheet: Sheet, known: Knowledge) -> None:
        self.check_structure(sheet)

    def refresh_request(self, con: duckdb.DuckDBPyConnection, sheet: Sheet, known: Knowledge, round_number: int) -> RefreshRequest | None:
        if round_number == 0:
            numbers = unresolved_numbers(sheet, "request_number", known)
            return RefreshRequest(tracking_requests=True, tracking_since=tracking_since(con), request_numbers=numbers)
        if round_number == 1:  # whether each shipment is tracked now, as the service says
            shipments: set[str] = set()
            for _, row in rows_of(sheet, []):
                for column in KEY_COLUMNS:
                    key = row.get(column, "").strip()
                    if key:  # an id is read as it is: the warehouse may not have that shipment yet
                        shipments.update([key] if column == "shipment_id" else shipment_candidates(column, key, known))
            return RefreshRequest(shipment_ids=sorted(shipments)) if shipments else None
        return None

    def plan(self, sheet: Sheet, known: Knowledge, *, clear_empty: bool = False) -> tuple[list[Change], list[Problem]]:
        changes: list[Change] = []
        problems: list[Problem] = []
        seen: dict[str, int] = {}
        for number, row in rows_of(sheet, problems):
            key_column = next((c for c in KEY_COLUMNS if row.get(c, "").strip()), KEY_COLUMNS[0])
            try:
                shipment_id = resolve_shipment(row, known)
            except ValueProblem as exc:
                problems.append(Problem(number, key_column, row.get(key_column, ""), str(exc)))
                continue
            if shipment_id in seen:
                problems.append(Problem(number, key_column, row[key_column], f"the same shipment is in row {seen[shipment_id]}"))
                continue
            seen[shipment_id] = number
            shipment = known.shipments[shipment_id]
            now = _state(shipment)
            keys = tuple((c, row[c].strip(), shipment_id) for c in KEY_COLUMNS if row.get(c, "").strip())
            if now == self.wanted:
                change = skipped(number, "shipment", shipment_id, "tracking", shipment_id, _stopped_how(shipment) if now == STOPPED else "")
                change.says, change.readings = f"already {now}", keys
                changes.append(change)
                continue
            changes.append(Change(number, "shipment", shipment_id, "tracking", "update", now, self.wanted, shipment_id, readings=keys))
        return changes, problems

    # Writing (an undo writes the other way: `after` says which).
    def phase(self, change: Change) -> int:
        return 0

    async def write(self, client: AsyncShipsyncClient, change: Change) -> None:
        """Stop or resume, then read the state back from the answer (or, where the answer does
        not say, from the shipment): a shipment the service still shows the other way is failed."""
        if change.after == STOPPED:
            shipment = await client.shipments.stop_tracking(change.entity_id)
        else:
            shipment = await client.shipments.resume_tracking(change.entity_id)
        if "line_tracking_stopped_at" not in (shipment.raw.get("attributes") or {}):
            shipment = await client.shipments.get(change.entity_id)
        shown = {"stopped_at": shipment.line_tracking_stopped_at, "stopped_reason": shipment.line_tracking_stopped_reason}
        if _state(shown) != change.after:
            raise ApiError(f"the service still shows it {_state(shown)} ({_stopped_how(shown)})")
        change.says = STOPPED if change.after == STOPPED else "resumed"
        change.payload["resource"] = shipment.raw

    # Reflecting: the shipment as the service answered it (its `line_tracking_stopped_*`).
    def reflect(self, applied: Sequence[Change], into: Reflection) -> None:
        answered = [c.payload["resource"] for c in applied if (c.payload.get("resource") or {}).get("attributes")]
        if answered:
            into.rows(declared_batch(answered, observed_at=into.observed_at))

    # Reversing: against whether each shipment is tracked now.
    def undo_refresh(self, images: Sequence[UndoImage], known: Knowledge, round_number: int) -> RefreshRequest | None:
        return RefreshRequest(shipment_ids=sorted({image.entity_id for image in images})) if round_number == 0 else None

    def reverse(self, images: Sequence[UndoImage], known: Knowledge) -> list[Change]:
        changes: list[Change] = []
        for row, image in enumerate(images, start=1):
            shipment = known.shipments.get(image.entity_id)
            if shipment is None:
                detail = "the shipment could not be read from the service; left as it is"
                changes.append(Change(row, "shipment", image.entity_id, "tracking", "skip", status="failed", detail=detail))
                continue
            now = _state(shipment)
            if now != image.after:
                change = as_before(row, image, _stopped_how(shipment) if now == STOPPED else "")
                change.says = f"already {now}"
                changes.append(change)
                continue
            changes.append(Change(row, "shipment", image.entity_id, "tracking", "update", now, image.before, image.entity_id))
        return changes


def stop_tracking() -> TrackingSwitch:
    return TrackingSwitch("stop-tracking", STOPPED)


def resume_tracking() -> TrackingSwitch:
    return TrackingSwitch("resume-tracking", TRACKING)
