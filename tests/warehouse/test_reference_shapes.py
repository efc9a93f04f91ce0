"""The warehouse keeps what the reference's shapes carry (issue 28, item 1): members a hold, a fee
or the import deadlines carry beyond their declared ones are kept in the row's leftovers (the typed
column still filled), an email's `from` is a list, and the records deliveries carry that the service
names (metro areas, a container's created and POD-terminal-changed events) reach typed tables."""

from __future__ import annotations

from typing import Any

import orjson

from shipsync.warehouse.declared_rows import declared_batch

CONTAINER: dict[str, Any] = {
    "id": "c-1",
    "type": "container",
    "attributes": {
        "number": "MSKU1234565",
        "holds_at_pod_terminal": [{"name": "customs", "status": "hold", "description": None, "released_by": "CBP"}],
        "fees_at_pod_terminal": [{"type": "demurrage", "amount": 175.0, "currency_code": "USD"}],
        "import_deadlines": {"pickup_lfd_terminal": "2026-05-25T00:00:00Z", "pickup_lfd_rail": None, "pickup_lfd_line": None, "note": "x"},
    },
}


def one_row(resource: dict[str, Any], table: str) -> dict[str, Any]:
    columns = declared_batch([resource], observed_at="2026-05-20T00:00:00Z")[table]
    return {name: values[0] for name, values in columns.items()}


def test_members_beyond_a_structs_declared_ones_are_kept() -> None:
    row = one_row(CONTAINER, "containers")
    assert orjson.loads(row["holds_at_pod_terminal"]) == [{"name": "customs", "status": "hold", "description": None}]
    assert orjson.loads(row["import_deadlines"])["pickup_lfd_terminal"] is not None
    left = orjson.loads(row["leftovers"])["attributes"]
    assert left["holds_at_pod_terminal"][0]["released_by"] == "CBP" and left["import_deadlines"]["note"] == "x"
    assert "fees_at_pod_terminal" not in left  # a fee with only its declared members is not repeated


def test_an_emails_senders_are_a_list() -> None:
    email = {"id": "e-1", "type": "email_submission", "attributes": {"from": ["a@example.com"], "to": ["b@example.com"]}}
    row = one_row(email, "email_submissions")
    assert row["from"] == ["a@example.com"] and row["leftovers"] is None


def test_delivered_metro_areas_and_container_record_events_reach_typed_tables() -> None:
    metro = {"id": "m-1", "type": "metro_area", "attributes": {"name": "Chicago", "code": "USCHI", "latitude": 41.8}, "": "USCHI"}
    created = {
        "id": "e-1",
        "type": "container_created_event",
        "attributes": {"timestamp": "2026-05-01T10:00:00Z", "timezone": "Asia/Shanghai", "data_source": "terminal"},
        "relationships": {"container": {"data": {"type": "container", "id": "c-1"}}, "terminal": {"data": None}},
    }
    moved = {**created, "id": "e-2", "type": "container_pod_terminal_changed_event"}
    uncoded = {"id": "m-2", "type": "metro_area", "attributes": {"name": "Nowhere"}}
    batch = declared_batch([metro, created, moved, uncoded], observed_at="2026-05-20T00:00:00Z")
    assert batch["metro_areas"]["id"] == ["m-1", "m-2"] and batch["metro_areas"]["code"] == ["USCHI", None]  # by id: a code is not a key
    events = batch["container_events"]
    assert events["kind"] == ["container_created_event", "container_pod_terminal_changed_event"]
    assert events["container_id"] == ["c-1", "c-1"] and events["data_source"] == ["terminal", "terminal"]
