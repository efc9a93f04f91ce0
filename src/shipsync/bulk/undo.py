"""`shipsync apply undo RUN_ID`: put back what a run changed, newest first; itself a recorded run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from shipsync.bulk.apply import ApplyReport
from shipsync.bulk.execute import execute
from shipsync.bulk.model import Change
from shipsync.bulk.record import store
from shipsync.config import Settings
from shipsync.errors import InputError
from shipsync.pull.run import ledger_run
from shipsync.warehouse.connection import connect


def _load(warehouse: Path, run_id: str) -> list[dict[str, Any]]:
    if not warehouse.exists():
        raise InputError(f"no warehouse at {warehouse}: nothing to undo")
    with connect(warehouse) as con:
        columns = [
            "seq",
            "kind",
            "entity_type",
            "entity_id",
            "field",
            "action",
            "resource_id",
            "before",
            "after",
            "undone_by",
        ]
        rows = con.execute(f"SELECT {', '.join(columns)} FROM bulk_undo WHERE run_id = ? ORDER BY seq DESC", [run_id]).fetchall()
    if not rows:
        raise InputError(f"run {run_id} changed nothing that can be undone (or is not a bulk apply run)")
    records = [dict(zip(columns, r, strict=True)) for r in rows]
    if all(r["undone_by"] for r in records):
        raise InputError(f"run {run_id} was already undone by run {records[0]['undone_by']}")
    return [r for r in records if not r["undone_by"]]


def reverse(image: dict[str, Any], row: int) -> Change | None:
    """The change that restores the before-image; None when the API offers no way back."""
    before = json.loads(image["before"]) if isinstance(image["before"], str) else image["before"]
    after = json.loads(image["after"]) if isinstance(image["after"], str) else image["after"]
    entity_type, entity_id, field = image["entity_type"], image["entity_id"], image["field"]
    if entity_type == "custom_field_definition":
        return None
    if entity_type == "tracking_request":
        return Change(row, entity_type, entity_id, field, "update", after, before, entity_id)
    if image["action"] == "create":
        return Change(row, entity_type, entity_id, field, "delete", after, None, image["resource_id"])
    if image["action"] == "update":
        return Change(row, entity_type, entity_id, field, "update", after, before, image["resource_id"])
    return Change(row, entity_type, entity_id, field, "create", None, before, None)


def undo_run(settings: Settings, run_id: str) -> ApplyReport:
    images = _load(settings.warehouse, run_id)
    with ledger_run(settings, "apply_undo", {"undo_of": run_id}) as record:
        changes: list[Change] = []
        for n, image in enumerate(images, start=1):
            change = reverse(image, n)
            if change is None:
                changes.append(
                    Change(
                        n,
                        image["entity_type"],
                        image["entity_id"],
                        image["field"],
                        "skip",
                        status="failed",
                        detail="the API offers no way to delete definitions or options; left in place",
                    )
                )
            else:
                changes.append(change)
        record.add_stats(execute(settings, changes))
        store(settings.warehouse, record.run_id, "undo", None, changes, [], undo_of=run_id)
        record.errors.extend(f"{c.entity_id} {c.field}: {c.status} {c.detail}" for c in changes if c.status != "applied")
        return ApplyReport(record.run_id, "undo", Path(run_id), False, None, changes, [], record.stats.requests)
