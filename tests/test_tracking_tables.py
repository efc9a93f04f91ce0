"""Typed tracking tables: `pull all` fills them with exactly what the service served, older data
never rolls a row back, and odd members never fail a load (they land in `leftovers`)."""

from __future__ import annotations

import asyncio
from datetime import date, datetime
from pathlib import Path
from typing import Any

import duckdb
import orjson

from conftest import RunningSandbox, settings_for
from shipsync.api.tracking_models import Container
from shipsync.api.tracking_reads import CONTAINER_INCLUDES
from shipsync.pull.everything import pull_all
from shipsync.warehouse.declared_rows import declared_columns
from shipsync.warehouse.declared_tables import DECLARED_BY_TYPE
from shipsync.warehouse.load import write_batch
from shipsync.warehouse.members import members_of

NEW_TABLES = ("shipments", "containers", "transport_events", "ports", "terminals", "vessels", "shipping_lines")


def rows(warehouse: Path, sql: str) -> list[dict[str, Any]]:
    con = duckdb.connect(str(warehouse), read_only=True)
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
                sent = (resource.get("attributes") or {}).get(member.name)
                assert (row[member.column] is None and sent is None) or same(row[member.column], sent), (resource["type"], member.name)
                checked += sent is not None
        # Leftovers hold only members the declaration does not name (none of them a misfit of a declared one).
        leftovers = orjson.loads(row["leftovers"]) if row["leftovers"] else {}
        named = {m.name for m in members_of(declaration)}
        assert not named & {*leftovers.get("attributes", {}), *leftovers.get("relationships", {})}, (resource["type"], leftovers)
    return checked


def test_pull_all_fills_every_new_table_with_what_was_served(sandbox: RunningSandbox, warehouse: Path) -> None:
    settings = settings_for(sandbox, warehouse)
    records = pull_all(settings)
    assert all(not r.errors and not r.not_found for r in records), [(r.flow, r.errors, r.not_found) for r in records]
    for table in NEW_TABLES:
        assert rows(warehouse, f"SELECT count(*) AS n FROM {table}")[0]["n"] > 0, table

    async def served() -> list[dict[str, Any]]:
        async with sandbox.client() as client:
            return [r async for page in client.containers.list_pages(include=CONTAINER_INCLUDES) for r in [*page.data, *page.included]]

    resources = asyncio.run(served())
    assert {"container", "shipment", "transport_event", "terminal"} <= {r["type"] for r in resources}
    assert assert_rows_hold(warehouse, resources) > 1000
    # Holds and fees as lists of structs, and what they add up to.
    boxes = rows(warehouse, "SELECT holds_at_pod_terminal AS holds, fees_at_pod_terminal AS fees, has_holds, fee_total FROM containers")
    for box in boxes:
        if box["holds"] is not None:
            assert box["has_holds"] == any(h["status"] == "hold" for h in box["holds"])
        if box["fees"]:
            totals = [f["amount"] for f in box["fees"] if f["type"] == "total"]
            assert box["fee_total"] == (totals[0] if totals else sum(f["amount"] for f in box["fees"]))
    # Rail terminals share the table, told apart by `kind`; relationship ids are columns.
    assert rows(warehouse, "SELECT count(*) AS n FROM containers WHERE shipment_id IS NULL")[0]["n"] == 0

    again = pull_all(settings)
    changed = {(r.flow, t): c.inserted + c.updated for r in again for t, c in r.counts.items() if c.inserted + c.updated}
    assert not changed, changed


def container(status: str, **attributes: Any) -> dict[str, Any]:
    return {"id": "c-1", "type": "container", "attributes": {"number": "MSKU1234565", "current_status": status, **attributes}}


def write_container(warehouse: Path, resource: dict[str, Any], observed_at: str) -> Any:
    columns = declared_columns(Container, [resource], observed_at=observed_at)
    return write_batch(warehouse, {"containers": columns}, run_id="test")["containers"]


def test_older_data_never_rolls_a_row_back(warehouse: Path) -> None:
    write_container(warehouse, container("available"), "2026-05-20T10:00:00Z")
    late = write_container(warehouse, container("on_ship"), "2026-05-19T10:00:00+00:00")  # read earlier, arrives later
    assert (late.stale, late.updated) == (1, 0)
    assert rows(warehouse, "SELECT current_status FROM containers") == [{"current_status": "available"}]
    newer = write_container(warehouse, container("picked_up"), "2026-05-21T10:00:00Z")
    assert newer.updated == 1
    # The same content seen later moves only the stamp, not the row's content or its run.
    seen = write_container(warehouse, container("picked_up"), "2026-05-22T10:00:00Z")
    assert (seen.unchanged, seen.updated) == (1, 0)
    (row,) = rows(warehouse, "SELECT current_status, observed_at FROM containers")
    assert row["current_status"] == "picked_up" and row["observed_at"].isoformat() == "2026-05-22T10:00:00+00:00"
    assert write_container(warehouse, container("available"), "2026-05-21T12:00:00Z").stale == 1


def test_odd_members_never_fail_a_load_and_are_kept(warehouse: Path) -> None:
    odd = container(
        "a_status_nobody_knew",
        equipment_length="forty",
        holds_at_pod_terminal=["customs"],  # strings where structs are declared
        fees_at_pod_terminal=[{"type": "demurrage", "amount": "12,50"}],
        pickup_lfd="not a date",
        brand_new={"x": 1},
        available_for_pickup=None,
    )
    odd["relationships"] = {"shipment": {"data": [{"type": "shipment", "id": "s-1"}]}, "pod_terminal": "odd"}
    write_container(warehouse, odd, "2026-05-20T10:00:00Z")
    (row,) = rows(warehouse, "SELECT * FROM containers")
    assert row["current_status"] == "a_status_nobody_knew"  # an unknown enum value is kept as text
    assert row["equipment_length"] is None and row["holds_at_pod_terminal"] is None and row["pickup_lfd"] is None
    assert row["has_holds"] is None and row["shipment_id"] is None
    leftovers = orjson.loads(row["leftovers"])
    assert leftovers["attributes"] == {
        "equipment_length": "forty",
        "holds_at_pod_terminal": ["customs"],
        "fees_at_pod_terminal": [{"type": "demurrage", "amount": "12,50"}],
        "pickup_lfd": "not a date",
        "brand_new": {"x": 1},
    }
    assert leftovers["relationships"] == {"shipment": {"data": [{"type": "shipment", "id": "s-1"}]}, "pod_terminal": "odd"}
