"""`shipsync apply stop-tracking` / `resume-tracking` against the sandbox (dry run, results,
re-run, undo), and the right record: a natural key naming several records is refused with the
candidates, and a second key column picks one."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest

from shipsync.bulk.apply import apply_file
from shipsync.bulk.custom_fields import resolve_entity
from shipsync.bulk.lookup import Knowledge
from shipsync.bulk.tracking_switch import resolve_shipment
from shipsync.bulk.undo import undo_run
from shipsync.values import ValueProblem
from shipsync_sandbox.routes_shipments import tracking_stopped
from support.sandboxes import K1, SandboxFactory, settings_for
from support.warehouse_rows import rows


def write_csv(path: Path, table: list[list[str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as out:
        csv.writer(out).writerows(table)
    return path


def tracked_requests(account: Any, count: int) -> list[tuple[str, str]]:
    """(request number, shipment id) of requests whose shipment the service is tracking now."""
    found: dict[str, tuple[str, str]] = {}
    for request in account.tracking_requests.values():
        shipment = ((request.get("relationships") or {}).get("tracked_object") or {}).get("data")
        if not shipment or request["attributes"]["status"] != "created":
            continue
        if tracking_stopped(account, account.resource("shipment", shipment["id"])):
            continue
        found.setdefault(shipment["id"], (request["attributes"]["request_number"], shipment["id"]))
    return list(found.values())[:count]


@pytest.mark.slow
def test_stop_then_rerun_then_undo_then_resume(make_sandbox: SandboxFactory, warehouse: Path, tmp_path: Path) -> None:
    sandbox = make_sandbox(documents=120)
    settings = settings_for(sandbox, warehouse)
    account = sandbox.state.world.accounts[K1]
    (first_number, first), (second_number, second) = tracked_requests(account, 2)
    stop = write_csv(tmp_path / "stop.csv", [["request_number"], [first_number], [second_number], ["NOSUCH123"]])

    dry = apply_file(settings, "stop-tracking", stop, dry_run=True)
    assert dry.counts["planned"] == 2 and [p.row for p in dry.problems] == [4] and not account.stopped

    applied = apply_file(settings, "stop-tracking", stop)
    assert applied.counts["applied"] == 2 and set(account.stopped) == {first, second}
    stopped = rows(warehouse, "SELECT id, line_tracking_stopped_reason AS reason FROM shipments WHERE line_tracking_stopped_at IS NOT NULL")
    assert {(r["id"], r["reason"]) for r in stopped} >= {(first, "cancelled_by_user"), (second, "cancelled_by_user")}

    again = apply_file(settings, "stop-tracking", stop)
    assert again.writes == 0 and again.counts["unchanged"] == 2

    undone = undo_run(settings, applied.run_id)  # undo of a stop is a resume
    assert undone.counts["applied"] == 2 and not account.stopped

    assert apply_file(settings, "stop-tracking", write_csv(tmp_path / "one.csv", [["shipment_id"], [first]])).counts["applied"] == 1
    resume = write_csv(tmp_path / "resume.csv", [["shipment_id"], [first], [second]])
    resumed = apply_file(settings, "resume-tracking", resume)
    assert resumed.counts["applied"] == 1 and resumed.counts["unchanged"] == 1 and not account.stopped


def knowledge_with_two_trips() -> Knowledge:
    known = Knowledge()
    known.shipments = {"s-1": {"bill": "MAEU1"}, "s-2": {"bill": "MAEU2"}}
    known.shipments_by_bill = {"MAEU1": ["s-1"], "MAEU2": ["s-2"]}
    known.tracking_requests = {"tr-1": {"tracked_object_id": "s-1"}, "tr-2": {"tracked_object_id": "s-2"}}
    known.tracking_by_number = {"BOOK7": ["tr-1", "tr-2"]}  # one booking, two shipments
    known.containers_by_number = {"CSQU3054383": ["c-1", "c-2"]}  # one box, two trips
    known.known_entities = {("container", "c-1"), ("container", "c-2")}
    return known


def test_a_key_naming_several_shipments_is_refused_with_the_candidates_and_a_second_key_picks_one() -> None:
    known = knowledge_with_two_trips()
    with pytest.raises(ValueProblem, match=r"2 shipments match: s-1 \(bill of lading MAEU1\), s-2 \(bill of lading MAEU2\)"):
        resolve_shipment({"request_number": "BOOK7"}, known)
    assert resolve_shipment({"request_number": "BOOK7", "bill_of_lading": "maeu2"}, known) == "s-2"
    with pytest.raises(ValueProblem, match="name different shipments"):
        resolve_shipment({"shipment_id": "s-1", "bill_of_lading": "MAEU2"}, known)


def test_a_container_number_on_two_trips_is_refused_with_both_and_its_id_picks_one() -> None:
    known = knowledge_with_two_trips()
    with pytest.raises(ValueProblem, match=r"2 containers have the number CSQU3054383 \(c-1, c-2\): name one by its container_id"):
        resolve_entity("container_number", "CSQU3054383", known)
    assert resolve_entity("container_id", "c-2", known) == ("container", "c-2")
    with pytest.raises(ValueProblem, match=r"2 tracking_requests have the request number BOOK7"):
        resolve_entity("request_number", "BOOK7", known)
