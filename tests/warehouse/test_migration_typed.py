"""A warehouse written by schema 8 (shipments, containers, email submissions and extractions kept as
JSON) is migrated in place to typed columns, and nothing it held is lost."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import orjson

from shipsync.warehouse.declared_tables import DECLARED_BY_TABLE
from shipsync.warehouse.members import members_of
from support.warehouse_rows import migrated, rows

FIXTURE = Path(__file__).parents[1] / "fixtures" / "schema_8.sql"

SHIPMENT = {
    "id": "s-1",
    "type": "shipment",
    "attributes": {
        "bill_of_lading_number": "MAEU123456789",
        "tags": ["urgent", "reefer"],
        "ref_numbers": ["PO-1"],
        "shipping_line_scac": "MAEU",
        "port_of_discharge_locode": "USLAX",
        "pod_eta_at": "2026-05-20T08:00:00Z",
        "pod_original_eta_at": "2026-05-18T08:00:00+02:00",
        "mystery_member": {"new": 1},  # a member no declaration knows
        "pod_vessel_imo": 9321483,  # a member of another type than declared
    },
    "relationships": {
        "port_of_discharge": {"data": {"type": "port", "id": "p-1"}},
        "destination": {"data": {"type": "metro_area", "id": "m-1"}},
        "containers": {"data": [{"type": "container", "id": "c-1"}]},
        "brand_new_relation": {"data": {"type": "thing", "id": "t-1"}},
    },
}
CONTAINER = {
    "id": "c-1",
    "type": "container",
    "attributes": {
        "number": "MSKU1234565",
        "current_status": "available",
        "equipment_length": 40,
        "available_for_pickup": True,
        "pickup_lfd": "2026-05-25T00:00:00Z",
        "holds_at_pod_terminal": [{"name": "customs", "status": "hold", "description": None}],
        "fees_at_pod_terminal": [{"type": "demurrage", "amount": 150.5, "currency_code": "USD"}, {"type": "exam", "amount": 49.5}],
        "import_deadlines": {"pickup_lfd_terminal": "2026-05-25T00:00:00Z"},
    },
    "relationships": {"shipment": {"data": {"type": "shipment", "id": "s-1"}}},
}
EMAIL = {
    "id": "e-1",
    "type": "email_submission",
    "attributes": {"subject": "Invoice", "from": "a@example.com", "to": ["b@example.com"], "cc": [], "documents_count": 1},
    "relationships": {"documents": {"data": [{"type": "document", "id": "d-1"}]}},
}
REPRESENTATION = {
    "id": "r-1",
    "type": "document_representation",
    "attributes": {"schema_version": "2026.03.23", "payload": {"total": 10.5}, "created_at": "2026-05-01T00:00:00Z"},
    "relationships": {},
}
TRANSPORT_EVENT = {
    "id": "te-1",
    "type": "transport_event",
    "attributes": {"event": "container.transport.vessel_discharged", "timestamp": "2026-05-20T10:00:00Z", "location_locode": "USLAX"},
    "relationships": {"container": {"data": {"type": "container", "id": "c-1"}}, "vessel": {"data": {"type": "vessel", "id": "v-1"}}},
}
VESSEL = {"id": "v-1", "type": "vessel", "attributes": {"name": "EVER ACE", "imo": "9893890"}, "relationships": {}}
USER = {"id": "u-1", "type": "user", "attributes": {"name": "Kim", "email": "kim@example.com"}, "relationships": {}}


def dumps(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def write_schema_8_file(path: Path) -> None:
    """What schema 8's loaders wrote: related records whole as JSON, and the event log."""
    con = duckdb.connect(str(path))
    con.execute(FIXTURE.read_text())
    for table, resource, event in (
        ("shipments", SHIPMENT, "2026-05-20T09:00:00Z"),
        ("containers", CONTAINER, None),
        ("email_submissions", EMAIL, None),
        ("document_representations", REPRESENTATION, None),
        ("users", USER, "2026-05-20T09:00:00Z"),
    ):
        con.execute(
            f"INSERT INTO {table} (id, attributes, relationships, first_seen_at, last_changed_at, last_event_at, last_event_id, "
            "_synced_at, _run_id) "
            "VALUES (?, ?, ?, TIMESTAMPTZ '2026-05-01 00:00:00+00', TIMESTAMPTZ '2026-05-02 00:00:00+00', ?, ?, "
            "TIMESTAMPTZ '2026-05-02 00:00:00+00', 'run-1')",
            [resource["id"], dumps(resource["attributes"]), dumps(resource["relationships"]), event, "n-0" if event else None],
        )
    # The delivery also carries the user as it was then: the stored row (typed, not replayed) keeps what it holds.
    user_then = {**USER, "attributes": {"name": "Kim (old)"}}
    body = {"data": {"id": "n-1", "type": "webhook_notification"}, "included": [TRANSPORT_EVENT, VESSEL, user_then]}
    con.execute(
        "INSERT INTO webhook_events (notification_id, event, created_at, reference_type, reference_id, payload) "
        "VALUES ('n-1', 'container.transport.vessel_discharged', TIMESTAMPTZ '2026-05-20 10:05:00+00', 'transport_event', 'te-1', ?)",
        [dumps(body)],
    )
    for resource in (TRANSPORT_EVENT, VESSEL, user_then):
        con.execute(
            "INSERT INTO webhook_event_resources VALUES ('n-1', ?, ?, ?, ?)",
            [resource["type"], resource["id"], dumps(resource["attributes"]), dumps(resource["relationships"])],
        )
    con.close()


def as_sent(row: dict[str, Any], table: str) -> dict[str, Any]:
    """The resource put back together from its typed columns and leftovers (JSON values, as sent)."""
    declaration = DECLARED_BY_TABLE[table]
    leftovers = orjson.loads(row["leftovers"]) if row["leftovers"] else {}
    attributes = dict(leftovers.get("attributes", {}))
    relationships = dict(leftovers.get("relationships", {}))
    for member in members_of(declaration):
        value = row[member.column]
        if member.kind == "ref":
            if value is not None:
                kind = row.get(f"{member.name}_type") or member.name
                relationships[member.name] = {"data": {"type": kind, "id": value}}
        elif member.kind == "refs":
            if value is not None:
                relationships[member.name] = {"data": [{"id": v} for v in value]}
        elif value is not None and member.name not in attributes:
            attributes[member.name] = value
    return {"attributes": attributes, "relationships": relationships}


def test_schema_8_file_migrates_to_typed_columns_and_loses_nothing(tmp_path: Path) -> None:
    path = tmp_path / "old.duckdb"
    write_schema_8_file(path)
    path = migrated(path, "containers")
    for table in ("shipments", "containers", "email_submissions", "document_representations"):
        columns = {r["column_name"] for r in rows(path, f"SELECT column_name FROM information_schema.columns WHERE table_name = '{table}'")}
        assert not {"attributes", "relationships", "last_event_at"} & columns, table

    (shipment,) = rows(path, "SELECT * FROM shipments")
    assert shipment["bill_of_lading_number"] == "MAEU123456789" and shipment["tags"] == ["urgent", "reefer"]
    assert shipment["pod_eta_at"].isoformat() == "2026-05-20T08:00:00+00:00"
    assert shipment["pod_original_eta_at"].timestamp() == 1779084000  # 06:00 UTC: the offset was kept
    assert (shipment["port_of_discharge_id"], shipment["destination_id"], shipment["destination_type"]) == ("p-1", "m-1", "metro_area")
    assert shipment["container_ids"] == ["c-1"]
    leftovers = orjson.loads(shipment["leftovers"])
    assert leftovers["attributes"] == {"mystery_member": {"new": 1}, "pod_vessel_imo": 9321483}
    assert leftovers["relationships"] == {"brand_new_relation": {"data": {"type": "thing", "id": "t-1"}}}
    # The bookkeeping is as it was; the event stamp became the freshness stamp.
    assert shipment["observed_at"].isoformat() == "2026-05-20T09:00:00+00:00" and shipment["last_event_id"] == "n-0"
    assert shipment["_run_id"] == "run-1" and shipment["first_seen_at"].isoformat().startswith("2026-05-01")

    (container,) = rows(path, "SELECT * FROM containers")
    assert container["number"] == "MSKU1234565" and container["shipment_id"] == "s-1" and container["equipment_length"] == 40
    assert container["holds_at_pod_terminal"] == [{"name": "customs", "status": "hold", "description": None}]
    assert container["has_holds"] is True and container["fee_total"] == 200.0
    assert container["import_deadlines"]["pickup_lfd_terminal"].isoformat() == "2026-05-25T00:00:00+00:00"
    assert container["leftovers"] is None

    (email,) = rows(path, "SELECT * FROM email_submissions")
    # `from` is a list (api-facts): the old single address does not fit it and is kept in leftovers.
    assert (email["from"], email["to"], email["document_ids"]) == (None, ["b@example.com"], ["d-1"])
    assert orjson.loads(email["leftovers"])["attributes"]["from"] == "a@example.com"
    (extraction,) = rows(path, "SELECT * FROM document_representations")
    assert extraction["schema_version"] == "2026.03.23" and orjson.loads(extraction["payload"]) == {"total": 10.5}

    # Every attribute each old row held is in a typed column or the leftovers.
    for table, resource in (("shipments", SHIPMENT), ("email_submissions", EMAIL), ("document_representations", REPRESENTATION)):
        (row,) = rows(path, f"SELECT * FROM {table}")
        back = as_sent(row, table)
        assert set(back["attributes"]) == set(resource["attributes"]), table

    # A user was kept whole as JSON: it is in `leftovers` now, as stored (the delivery's older copy not replayed over it).
    (user,) = rows(path, "SELECT * FROM users")
    assert orjson.loads(user["leftovers"]) == {"attributes": USER["attributes"]}
    assert (user["observed_at"].isoformat(), user["last_event_id"]) == ("2026-05-20T09:00:00+00:00", "n-0")

    # The event log's transport events and places fill their new tables.
    (event,) = rows(path, "SELECT * FROM transport_events")
    assert (event["container_id"], event["vessel_id"], event["last_event_id"]) == ("c-1", "v-1", "n-1")
    assert rows(path, "SELECT name FROM vessels") == [{"name": "EVER ACE"}]
    assert rows(path, "SELECT container_number, vessel FROM container_milestones") == [
        {"container_number": "MSKU1234565", "vessel": "EVER ACE"}
    ]
