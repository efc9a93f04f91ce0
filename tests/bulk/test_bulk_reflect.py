"""Unit tests of `bulk.reflect`: what an applied write leaves in the warehouse, and that a delivery
sent before the write, loaded after it, cannot put the old value back."""

from __future__ import annotations

from pathlib import Path

from shipsync.api.account_models import TrackingRequest
from shipsync.bulk.model import Change
from shipsync.bulk.record import reflect
from shipsync.bulk.tracking_edits import TrackingRequestEdits
from shipsync.warehouse.declared_rows import declared_tables_batch
from support.lake import sql_now, write_now, written
from support.warehouse_rows import rows

REFRESHED = "2026-01-01T00:00:00+00:00"  # the apply's refresh read the request then
DELIVERED = "2026-01-01T00:05:00+00:00"  # a delivery created after that read, before the write


def request(ref_numbers: list[str], tags: list[str]) -> dict[str, object]:
    return {
        "id": "tr-1",
        "type": "tracking_request",
        "attributes": {"request_number": "MAEU1", "ref_numbers": ref_numbers, "shipment_tags": tags, "status": "created"},
        "relationships": {"tracked_object": {"data": {"type": "shipment", "id": "s-1"}}},
    }


def test_a_delivery_from_before_the_write_does_not_undo_it(tmp_path: Path) -> None:
    warehouse = tmp_path / "w"
    write_now(warehouse, declared_tables_batch(TrackingRequest, [request(["REQ-1"], ["a"])], observed_at=REFRESHED))
    # The request's answer to `ref_number` REQ-2 shows it among its (its shipment's) reference numbers.
    answer = {"resource": {"id": "tr-1", "type": "tracking_request", "attributes": {"ref_numbers": ["REQ-1", "REQ-2"]}}}
    applied = [
        Change(3, "shipment", "s-1", "tags", "update", ["a"], ["b"], resource_id="s-1"),
        Change(2, "tracking_request", "tr-1", "ref_number", "update", ["REQ-1"], "REQ-2", "tr-1", payload=answer),
    ]
    with written(warehouse) as lake:
        reflect(lake, TrackingRequestEdits(), applied)
    (row,) = rows(warehouse, "SELECT ref_numbers, tags, observed_at FROM tracking_requests")
    assert (row["ref_numbers"], row["tags"]) == (["REQ-1", "REQ-2"], ["b"]) and row["observed_at"].isoformat() > DELIVERED

    late = write_now(warehouse, declared_tables_batch(TrackingRequest, [request(["REQ-1"], ["a"])], observed_at=DELIVERED))
    assert late["tracking_requests"].stale == 1
    assert rows(warehouse, "SELECT ref_numbers, tags FROM tracking_requests") == [{"ref_numbers": ["REQ-1", "REQ-2"], "tags": ["b"]}]


def test_many_writes_reflect_as_one_statement_per_kind_the_last_given_winning(tmp_path: Path) -> None:
    # Two requests of one shipment edited in one run: the shipment holds what the later write
    # answered, as if each update had run in turn (they run as one statement per table and columns).
    warehouse = tmp_path / "w"
    first, second = request(["REQ-1"], ["a"]), {**request(["REQ-1"], ["a"]), "id": "tr-2"}
    write_now(warehouse, declared_tables_batch(TrackingRequest, [first, second], observed_at=REFRESHED))
    sql_now(warehouse, "INSERT INTO shipments (id, ref_numbers, observed_at) VALUES ('s-1', ['REQ-1'], ?)", [REFRESHED])
    applied = [
        Change(
            2,
            "tracking_request",
            tr,
            "ref_number",
            "update",
            ["REQ-1"],
            ref,
            tr,
            payload={"resource": {"attributes": {"ref_numbers": shown}}},
        )
        for tr, ref, shown in (("tr-1", "REQ-2", ["REQ-1", "REQ-2"]), ("tr-2", "REQ-3", ["REQ-1", "REQ-2", "REQ-3"]))
    ]
    applied.append(Change(3, "shipment", "s-9", "tags", "update", [], [], resource_id="s-9"))  # no such shipment: nothing
    with written(warehouse) as lake:
        reflect(lake, TrackingRequestEdits(), applied)
    assert rows(warehouse, "SELECT id, ref_numbers FROM tracking_requests ORDER BY id") == [
        {"id": "tr-1", "ref_numbers": ["REQ-1", "REQ-2"]},
        {"id": "tr-2", "ref_numbers": ["REQ-1", "REQ-2", "REQ-3"]},
    ]
    assert rows(warehouse, "SELECT ref_numbers FROM shipments") == [{"ref_numbers": ["REQ-1", "REQ-2", "REQ-3"]}]
