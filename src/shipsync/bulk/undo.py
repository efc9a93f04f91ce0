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

import duckdb

from shipsync.bulk.apply import ApplyReport
from shipsync.bulk.execute import WRITE_ACTIONS, execute
from shipsync.bulk.model import Action, Change, Target
from shipsync.bulk.progress import RequestBudget, Stage, no_progress
from shipsync.bulk.record import ResultsLog
from shipsync.config import Settings
from shipsync.errors import InputError
from shipsync.json_text import loads
from shipsync.warehouse.ledger import warehouse_run

COLUMNS = ["seq", "kind", "entity_type", "entity_id", "field", "action", "resource_id", "before", "after", "undone_by"]
TARGET_OF_ENTITY: dict[str, Target] = {"custom_field_definition": "definition", "custom_field_option": "option"}
UNDO_ACTION: dict[str, Action] = {"create": "delete", "delete": "create", "update": "update"}


def _load(con: duckdb.DuckDBPyConnection, run_id: str) -> tuple[list[dict[str, Any]], dict[str, str | None]]:
    """The run's before-images, newest first, less those already undone; each tracking request's
    shipment (a request's reference number is undone on it)."""
    rows = con.execute(f"SELECT {', '.join(COLUMNS)} FROM bulk_undo WHERE run_id = ? ORDER BY seq DESC", [run_id]).fetchall()
    if not rows:
        raise InputError(f"run {run_id} changed nothing that can be undone (or is not a bulk apply run)")
    records = [dict(zip(COLUMNS, r, strict=True)) for r in rows]
    if all(r["undone_by"] for r in records):
        raise InputError(f"run {run_id} was already undone by run {records[0]['undone_by']}")
    shipments = dict(con.execute("SELECT id, tracked_object_id FROM tracking_requests").fetchall())
    return [r for r in records if not r["undone_by"]], shipments


def target_of(kind: str | None, entity_type: str) -> Target:
    if kind == "custom-fields":
        return "custom_field"
    if entity_type in TARGET_OF_ENTITY:
        return TARGET_OF_ENTITY[entity_type]
    return "shipment" if entity_type == "shipment" else "tracking_request" if kind == "tracking-requests" else "custom_field"


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
    settings.require_api_key()
    if not settings.lake.exists():
        raise InputError(f"no warehouse at {settings.lake.describe()}: nothing to undo")
    with warehouse_run(settings.lake, "apply_undo", {"undo_of": run_id}, flow_run_id=settings.flow_run_id) as run:
        images, shipments = _load(run.con, run_id)
        with run.step("apply_undo", {"undo_of": run_id}) as record:
            changes = [change for n, image in enumerate(images, start=1) for change in reverse(image, n, shipments)]
            writes = sum(1 for c in changes if c.action in WRITE_ACTIONS)
            with progress(f"undoing {writes:,} changes", writes, RequestBudget(settings.rate)) as advance:
                record.add_stats(execute(settings, changes, on_written=advance))
            ResultsLog(run.warehouse, record.run_id, "undo", None).store(changes, [], undo_of=run_id)
            record.errors.extend(f"{c.entity_id} {c.field}: {c.status} {c.detail}" for c in changes if c.status != "applied")
        return ApplyReport(record.run_id, "undo", Path(run_id), False, None, changes, [], record.stats.requests)
