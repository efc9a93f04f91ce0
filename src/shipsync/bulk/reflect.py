"""What the warehouse learns from applied writes, staged with the run that records them: values
written or removed, shipments' tags and reference numbers (and the tracking requests that show
them), tracking requests' reference numbers after a `ref_number` edit, definitions and options
created, edited or removed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import duckdb
import pyarrow as pa

from shipsync.api.account_models import CustomField, CustomFieldDefinition
from shipsync.bulk.model import Change
from shipsync.json_text import dumps_or_null
from shipsync.warehouse.declared_rows import Batch, declared_tables_batch, observed_now
from shipsync.warehouse.identifiers import ident
from shipsync.warehouse.load import write_batch
from shipsync.warehouse.normalize import merge, option_columns
from shipsync.warehouse.unit_of_work import CommitContext, Warehouse

# Definition attributes kept as JSON in the warehouse.
JSON_ATTRIBUTES = ("validation", "default_value")

# A row a write changed holds, for that member, the state after the write: its freshness stamp
# moves to the reflection's time, so that a delivery sent before the write (loaded later) cannot put
# the old value back. The row's other members are then taken as that new too: a delivery from before
# the write that changed one of them is refused, and the next pull or delivery brings it.
STAMPED = "observed_at = greatest(coalesce(observed_at, CAST($stamp AS TIMESTAMPTZ)), CAST($stamp AS TIMESTAMPTZ))"

Update = tuple[str, str, dict[str, Any]]  # table, statement, its named parameters


def _update(table: str, sql: str, values: dict[str, Any], stamp: str) -> Update:
    return table, sql.replace("$stamped", STAMPED), {**values, "stamp": stamp}


def _shipment_list(change: Change, stamp: str) -> list[Update]:
    values = {"values": list(change.after or []), "id": change.entity_id}
    column = "tags" if change.field == "tags" else "ref_numbers"
    return [
        _update("shipments", f"UPDATE shipments SET {column} = $values, $stamped WHERE id = $id", values, stamp),
        _update(
            "tracking_requests", f"UPDATE tracking_requests SET {column} = $values, $stamped WHERE tracked_object_id = $id", values, stamp
        ),
    ]


def _tracking_request_refs(change: Change, stamp: str) -> list[Update]:
    """A request's reference numbers as its answer showed them: the request's and its shipment's."""
    resource = change.payload.get("resource") or {}
    shown = (resource.get("attributes") or {}).get("ref_numbers")
    if not isinstance(shown, list):
        return []
    values = {"values": list(shown), "id": change.entity_id}
    shipment = (
        "UPDATE shipments SET ref_numbers = $values, $stamped WHERE id = (SELECT tracked_object_id FROM tracking_requests WHERE id = $id)"
    )
    return [
        _update("tracking_requests", "UPDATE tracking_requests SET ref_numbers = $values, $stamped WHERE id = $id", values, stamp),
        _update("shipments", shipment, values, stamp),
    ]


def _definition_update(change: Change, stamp: str) -> list[Update]:
    updates = []
    for name, value in (change.after or {}).items():
        stored: Any = dumps_or_null(value) if name in JSON_ATTRIBUTES else value
        sql = f"UPDATE custom_field_definitions SET {ident(name)} = $value, $stamped WHERE id = $id"
        updates.append(_update("custom_field_definitions", sql, {"value": stored, "id": change.resource_id}, stamp))
    return updates


def _deletes(warehouse: Warehouse, applied: Sequence[Change]) -> list[Update]:
    deleted = [c for c in applied if c.action == "delete" and c.resource_id]
    gone_definitions = [c.resource_id for c in deleted if c.target == "definition" and c.resource_id]
    targets = (
        ("custom_fields", "id", [c.resource_id for c in deleted if c.target == "custom_field" and c.resource_id]),
        ("custom_field_options", "id", [c.resource_id for c in deleted if c.target == "option" and c.resource_id]),
        ("custom_field_definitions", "id", gone_definitions),
        ("custom_field_options", "definition_id", gone_definitions),
    )
    statements: list[Update] = []
    for table, column, ids in targets:
        if ids:
            gone = warehouse.stage(f"{table}_gone", pa.table({"id": pa.array(ids, pa.string())}))
            statements.append((table, f"DELETE FROM {table} WHERE {column} IN (SELECT id FROM {gone})", {}))
    return statements


def reflect(warehouse: Warehouse, applied: Sequence[Change]) -> None:
    """Stage what `applied` (writes the service accepted) changed in the warehouse's copy."""
    batch: Batch = {}
    updates: list[Update] = []
    observed_at = observed_now()  # after the writes: what they answered is the newest state
    for change in applied:
        resource = change.payload.get("resource")
        if change.target == "custom_field" and resource and change.action != "delete":
            merge(batch, declared_tables_batch(CustomField, [resource], observed_at=observed_at))
        elif change.target == "shipment":
            updates += _shipment_list(change, observed_at)
        elif change.target == "tracking_request":
            updates += _tracking_request_refs(change, observed_at)
        elif change.target == "definition" and change.action == "create" and resource:
            merge(batch, declared_tables_batch(CustomFieldDefinition, [resource], observed_at=observed_at))
            options = change.payload.get("options_created", [])
            merge(batch, option_columns(str(resource["id"]), options, observed_at=observed_at))
        elif change.target == "definition" and change.action == "update":
            updates += _definition_update(change, observed_at)
        elif change.target == "option" and change.action == "create" and resource:
            merge(batch, option_columns(change.entity_id, [resource], observed_at=observed_at))
        elif change.target == "option" and change.action == "update":
            after = change.after or {}
            sql = "UPDATE custom_field_options SET label = $label, position = $position, $stamped WHERE id = $id"
            updates.append(
                _update(
                    "custom_field_options",
                    sql,
                    {"label": after["label"], "position": after["position"], "id": change.resource_id},
                    observed_at,
                )
            )
    if batch:
        write_batch(warehouse, batch)
    updates += _deletes(warehouse, applied)
    if updates:

        def replay(con: duckdb.DuckDBPyConnection, commit: CommitContext) -> None:
            for _, sql, values in updates:
                con.execute(sql, values)

        warehouse.defer(sorted({table for table, _, _ in updates}), replay)
