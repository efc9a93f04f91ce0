"""What the warehouse learns from applied writes, in the transaction that records them: values
written or removed, shipments' tags and reference numbers (and the tracking requests that show
them), tracking requests' reference numbers after a `ref_number` edit, definitions and options
created, edited or removed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import duckdb
import pyarrow as pa

from shipsync.bulk.model import Change
from shipsync.json_text import dumps_or_null
from shipsync.warehouse.declared_rows import observed_now
from shipsync.warehouse.load import write_batch_with
from shipsync.warehouse.normalize import Batch, custom_field_columns, definition_columns, merge, option_columns

# Definition attributes kept as JSON in the warehouse.
JSON_ATTRIBUTES = ("validation", "default_value")


def _delete(con: duckdb.DuckDBPyConnection, table: str, column: str, ids: list[str]) -> None:
    if not ids:
        return
    con.register("_gone", pa.table({"id": pa.array(ids, pa.string())}))
    try:
        con.execute(f"DELETE FROM {table} WHERE {column} IN (SELECT id FROM _gone)")
    finally:
        con.unregister("_gone")


# A row a write changed holds, for that member, the state after the write: its freshness stamp
# moves to the reflection's time, so that a delivery sent before the write (loaded later) cannot put
# the old value back. The row's other members are then taken as that new too: a delivery from before
# the write that changed one of them is refused, and the next pull or delivery brings it.
STAMPED = "observed_at = greatest(coalesce(observed_at, CAST($stamp AS TIMESTAMPTZ)), CAST($stamp AS TIMESTAMPTZ))"


def _update(con: duckdb.DuckDBPyConnection, sql: str, values: dict[str, Any], stamp: str) -> None:
    con.execute(sql.replace("$stamped", STAMPED), {**values, "stamp": stamp})


def _shipment_list(con: duckdb.DuckDBPyConnection, change: Change, stamp: str) -> None:
    values = {"values": list(change.after or []), "id": change.entity_id}
    column = "tags" if change.field == "tags" else "ref_numbers"
    _update(con, f"UPDATE shipments SET {column} = $values, $stamped WHERE id = $id", values, stamp)
    _update(con, f"UPDATE tracking_requests SET {column} = $values, $stamped WHERE tracked_object_id = $id", values, stamp)


def _tracking_request_refs(con: duckdb.DuckDBPyConnection, change: Change, stamp: str) -> None:
    """A request's reference numbers as its answer showed them: the request's and its shipment's."""
    resource = change.payload.get("resource") or {}
    shown = (resource.get("attributes") or {}).get("ref_numbers")
    values = {"values": list(shown) if isinstance(shown, list) else None, "id": change.entity_id}
    if values["values"] is None:
        return
    _update(con, "UPDATE tracking_requests SET ref_numbers = $values, $stamped WHERE id = $id", values, stamp)
    sql = "UPDATE shipments SET ref_numbers = $values, $stamped WHERE id = (SELECT tracked_object_id FROM tracking_requests WHERE id = $id)"
    _update(con, sql, values, stamp)


def _definition_update(con: duckdb.DuckDBPyConnection, change: Change, stamp: str) -> None:
    for name, value in (change.after or {}).items():
        stored: Any = dumps_or_null(value) if name in JSON_ATTRIBUTES else value
        sql = f'UPDATE custom_field_definitions SET "{name}" = $value, $stamped WHERE id = $id'
        _update(con, sql, {"value": stored, "id": change.resource_id}, stamp)


def reflect(con: duckdb.DuckDBPyConnection, applied: Sequence[Change], *, run_id: str) -> None:
    batch: Batch = {}
    observed_at = observed_now()  # after the writes: what they answered is the newest state
    for change in applied:
        resource = change.payload.get("resource")
        if change.target == "custom_field" and resource and change.action != "delete":
            merge(batch, custom_field_columns([resource], observed_at=observed_at))
        elif change.target == "shipment":
            _shipment_list(con, change, observed_at)
        elif change.target == "tracking_request":
            _tracking_request_refs(con, change, observed_at)
        elif change.target == "definition" and change.action == "create" and resource:
            merge(batch, definition_columns([resource], observed_at=observed_at))
            options = change.payload.get("options_created", [])
            merge(batch, option_columns(str(resource["id"]), options, observed_at=observed_at))
        elif change.target == "definition" and change.action == "update":
            _definition_update(con, change, observed_at)
        elif change.target == "option" and change.action == "create" and resource:
            merge(batch, option_columns(change.entity_id, [resource], observed_at=observed_at))
        elif change.target == "option" and change.action == "update":
            after = change.after or {}
            sql = "UPDATE custom_field_options SET label = $label, position = $position, $stamped WHERE id = $id"
            _update(con, sql, {"label": after["label"], "position": after["position"], "id": change.resource_id}, observed_at)
    if batch:
        write_batch_with(con, batch, run_id=run_id)
    deleted = [c for c in applied if c.action == "delete" and c.resource_id]
    _delete(con, "custom_fields", "id", [c.resource_id for c in deleted if c.target == "custom_field" and c.resource_id])
    _delete(con, "custom_field_options", "id", [c.resource_id for c in deleted if c.target == "option" and c.resource_id])
    gone_definitions = [c.resource_id for c in deleted if c.target == "definition" and c.resource_id]
    _delete(con, "custom_field_definitions", "id", gone_definitions)
    _delete(con, "custom_field_options", "definition_id", gone_definitions)
