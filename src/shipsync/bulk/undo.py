"""`shipsync apply undo RUN_ID`: put back what a run changed, newest first; itself a recorded run.

Values: created ones deleted, changed ones patched back, removed ones created again. A shipment's
tags and reference numbers: what the run added taken out and what it removed put back, against the
lists as they are now (what others changed since stays). A tracking request's `ref_number` (which
the service adds to its shipment's reference numbers and cannot clear): the number taken out of the
shipment's `ref_numbers`, the same way. Definitions: created ones deleted, edited ones patched back; options: created ones
deleted, relabelled or moved ones patched back, removed ones created again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from shipsync.bulk.apply import ApplyReport
from shipsync.bulk.execute import WRITE_ACTIONS, execute
from shipsync.bulk.model import Action, Change, Target
from shipsync.bulk.progress import RequestBudget, Stage, no_progress
from shipsync.bulk.record import store
from shipsync.config import Settings
from shipsync.errors import InputError
from shipsync.json_text import loads
from shipsync.warehouse.connection import connect
from shipsync.warehouse.ledger import ledger_run

COLUMNS = ["seq", "kind", "entity_type", "entity_id", "field", "action", "resource_id", "before", "after", "undone_by"]
TARGET_OF_ENTITY: dict[str, Target] = {"custom_field_definition": "definition", "custom_field_option": "option"}
UNDO_ACTION: dict[str, Action] = {"create": "delete", "delete": "create", "update": "update"}


def _load(warehouse: Path, run_id: str) -> tuple[list[dict[str, Any]], dict[str, str | None]]:
    """The run's before-images, newest first, and each tracking request's shipment (for older runs)."""
    if not warehouse.exists():
        raise InputError(f"no warehouse at {warehouse}: nothing to undo")
    with connect(warehouse) as con:
        rows = con.execute(f"SELECT {', '.join(COLUMNS)} FROM bulk_undo WHERE run_id = ? ORDER BY seq DESC", [run_id]).fetchall()
        shipments = dict(con.execute("SELECT id, tracked_object_id FROM tracking_requests").fetchall())
    if not rows:
        raise InputError(f"run {run_id} changed nothing that can be undone (or is not a bulk apply run)")
    records = [dict(zip(COLUMNS, r, strict=True)) for r in rows]
    if all(r["undone_by"] for r in records):
        raise InputError(f"run {run_id} was already undone by run {records[0]['undone_by']}")
    return [r for r in records if not r["undone_by"]], shipments


def target_of(kind: str | None, entity_type: str) -> Target:
    if kind == "custom-fields":
        return "custom_field"
    if entity_type in TARGET_OF_ENTITY:
        return TARGET_OF_ENTITY[entity_type]
    return "shipment" if entity_type == "shipment" else "tracking_request" if kind == "tracking-requests" else "custom_field"


def _older_tracking_edit(image: dict[str, Any], row: int, shipment_id: str | None, before: Any, after: Any) -> list[Change]:
    """A run of shipsync before schema 7 edited tags and ref_numbers on the tracking request itself
    (which the service does not take): undo them on its shipment; the rest cannot be changed back."""
    changes: list[Change] = []
    fixed: list[str] = []
    for name in sorted(after):
        if name in ("tags", "ref_numbers") and shipment_id:
            previous = before.get(name) or []
            delta = {"delta": True}
            changes.append(
                Change(row, "shipment", shipment_id, name, "update", after[name], previous, shipment_id, payload=delta, target="shipment")
            )
        else:
            fixed.append(name)
    if fixed:
        detail = "the service's API cannot change these back; left as they are"
        changes.append(Change(row, "tracking_request", image["entity_id"], ",".join(fixed), "skip", status="failed", detail=detail))
    return changes


def _reference_number_edit(row: int, shipment_id: str | None, shown: Any, number: str, tr_id: str) -> list[Change]:
    """Undo of a request's `ref_number`: take the number out of its shipment's reference numbers."""
    if not shipment_id:
        detail = "the request tracks no shipment whose reference numbers could be changed back; left as it is"
        return [Change(row, "tracking_request", tr_id, "ref_number", "skip", status="failed", detail=detail)]
    before = [str(n) for n in shown] if isinstance(shown, list) else []
    applied = before if number in before else [*before, number]
    delta = {"delta": True}
    return [Change(row, "shipment", shipment_id, "ref_numbers", "update", applied, before, shipment_id, payload=delta, target="shipment")]


def reverse(image: dict[str, Any], row: int, shipments: dict[str, str | None]) -> list[Change]:
    """The changes that restore one before-image."""
    before, after = loads(image["before"]), loads(image["after"])
    entity_type, entity_id, field = image["entity_type"], image["entity_id"], image["field"]
    target = target_of(image["kind"], entity_type)
    if target == "tracking_request" and isinstance(after, dict):
        return _older_tracking_edit(image, row, shipments.get(entity_id), before or {}, after)
    if target == "tracking_request" and field == "ref_number" and isinstance(after, str):
        return _reference_number_edit(row, shipments.get(entity_id), before, after, entity_id)
    action = UNDO_ACTION[image["action"]]
    payload: dict[str, Any] = {}
    if target == "shipment":
        payload["delta"] = True
    if target == "option" and action == "create":
        payload["definition_id"] = entity_id
    resource_id = None if action == "create" else image["resource_id"]
    return [Change(row, entity_type, entity_id, field, action, after, before, resource_id, payload=payload, target=target)]


def undo_run(settings: Settings, run_id: str, *, progress: Stage = no_progress) -> ApplyReport:
    images, shipments = _load(settings.warehouse, run_id)
    with ledger_run(settings, "apply_undo", {"undo_of": run_id}) as record:
        changes = [change for n, image in enumerate(images, start=1) for change in reverse(image, n, shipments)]
        writes = sum(1 for c in changes if c.action in WRITE_ACTIONS)
        with progress(f"undoing {writes:,} changes", writes, RequestBudget(settings.rate)) as advance:
            record.add_stats(execute(settings, changes, on_written=advance))
        store(settings.warehouse, record.run_id, "undo", None, changes, [], undo_of=run_id)
        record.errors.extend(f"{c.entity_id} {c.field}: {c.status} {c.detail}" for c in changes if c.status != "applied")
        return ApplyReport(record.run_id, "undo", Path(run_id), False, None, changes, [], record.stats.requests)
