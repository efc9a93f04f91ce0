"""Reading a test's warehouse: rows as dicts, typed columns against what the service sent."""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path
from typing import Any

import orjson

from shipsync.api.tracking_models import Container
from shipsync.warehouse.declared_rows import declared_columns
from shipsync.warehouse.declared_tables import DECLARED_BY_TYPE
from shipsync.warehouse.members import members_of
from shipsync_sandbox.deliver import envelope
from support.lake import Where, analyst, write_now


def rows(warehouse: Where, sql: str) -> list[dict[str, Any]]:
    con = analyst(warehouse)
    try:
        cursor = con.execute(sql)
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, r, strict=True)) for r in cursor.fetchall()]
    finally:
        con.close()


def same(column: Any, sent: Any) -> bool:
    """A typed value equals what the service sent (instants compared as instants)."""
    if isinstance(column, datetime):
        return column == datetime.fromisoformat(sent)
    if isinstance(column, date):
        return column.isoformat() == sent[:10]
    if isinstance(column, dict) and isinstance(sent, dict):
        return all(same(column[k], sent.get(k)) for k in column)
    if isinstance(column, list) and isinstance(sent, list):
        return len(column) == len(sent) and all(same(c, s) for c, s in zip(column, sent, strict=True))
    if isinstance(column, float) and isinstance(sent, str):  # a number the service sent as text
        return column == float(sent)
    if isinstance(column, str) and not isinstance(sent, str):  # JSON columns
        return bool(orjson.loads(column) == sent)
    return bool(column == sent)


def assert_rows_hold(warehouse: Path, resources: list[dict[str, Any]]) -> int:
    checked = 0
    tables: dict[str, dict[str, dict[str, Any]]] = {}  # each table read once, by id
    for resource in resources:
        declaration = DECLARED_BY_TYPE[resource["type"]]
        if declaration.table_name not in tables:
            tables[declaration.table_name] = {r["id"]: r for r in rows(warehouse, f"SELECT * FROM {declaration.table_name}")}
        row = tables[declaration.table_name][resource["id"]]
        for member in members_of(declaration):
            if member.kind in ("ref", "refs"):
                data = (resource.get("relationships") or {}).get(member.name, {}).get("data")
                expected = [d["id"] for d in data] if isinstance(data, list) else (data or {}).get("id")
                assert row[member.column] == expected, (resource["type"], member.name)
            else:
                attributes = resource.get("attributes") or {}
                sent = resource.get(member.name) if member.place == "top_level" else attributes.get(member.name)
                if sent is None and member.also_sent_as:  # e.g. a tracking request's tags as `shipment_tags`
                    sent = attributes.get(member.also_sent_as)
                assert (row[member.column] is None and sent is None) or same(row[member.column], sent), (resource["type"], member.name)
                checked += sent is not None
        # Leftovers hold only members the declaration does not name (none of them a misfit of a
        # declared one), and a struct as sent when it carried members its struct does not declare.
        leftovers = orjson.loads(row["leftovers"]) if row["leftovers"] else {}
        sent_attributes = resource.get("attributes") or {}
        named = {m.name for m in members_of(declaration) if not m.carries_unknown(sent_attributes.get(m.name))}
        assert not named & {*leftovers.get("attributes", {}), *leftovers.get("relationships", {})}, (resource["type"], leftovers)
    return checked


def write_container(warehouse: Where, resource: dict[str, Any], observed_at: str) -> Any:
    """One container as a run of its own; what that run's commit did to `containers`."""
    return write_now(warehouse, {"containers": declared_columns(Container, [resource], observed_at=observed_at)})["containers"]


def container_numbers(warehouse: Path, limit: int) -> list[str]:
    con = analyst(warehouse)
    try:
        return [r[0] for r in con.execute(f"SELECT number FROM containers ORDER BY id LIMIT {limit}").fetchall()]
    finally:
        con.close()


def count(warehouse: Path, sql: str) -> int:
    con = analyst(warehouse)
    try:
        row = con.execute(sql).fetchone()
        return int(row[0]) if row else 0
    finally:
        con.close()


def load_deliveries(warehouse: Path, bodies: list[bytes]) -> None:
    """Notification bodies through a spool segment and `events load`, as the receiver leaves them."""
    from shipsync.webhooks.framing import encode_record
    from shipsync.webhooks.load import load_events
    from support.lake import location

    spool = warehouse.parent / "spool"
    spool.mkdir(parents=True, exist_ok=True, mode=0o700)
    (spool / "segment-1.spool").write_bytes(b"".join(encode_record(b, 0) for b in bodies))
    load_events(location(warehouse), spool)


def container_updated(container_id: str, at: str, changeset: dict[str, Any], notification_id: str) -> bytes:
    """A `container.updated` delivery with one changeset at `at`."""
    reference = {
        "id": f"cue-{notification_id}",
        "type": "container_updated_event",
        "attributes": {"timestamp": at, "changeset": changeset, "data_source": "terminal"},
        "relationships": {"container": {"data": {"type": "container", "id": container_id}}},
    }
    document = envelope("w", "container.updated", reference, [reference], at)
    document["data"]["id"] = notification_id
    return orjson.dumps(document)
