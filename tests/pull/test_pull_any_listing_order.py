"""The incremental pulls load every record whatever order the service lists in: the sandbox lists
in the reference's order, newest first, oldest first or by id, and after each incremental pull a
full pass finds nothing the incremental one missed. Only a listing whose pages show the order the
walk relies on (newest first by its stamp) lets the walk stop early, and then it does."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest

from shipsync.config import Settings
from shipsync.pull.documents import pull_documents
from shipsync.pull.tracking import pull_containers, pull_shipments
from shipsync.pull.tracking_requests import pull_tracking_requests
from shipsync.warehouse.ledger import RunRecord
from support.sandboxes import K1, RunningSandbox, SandboxFactory, settings_for
from support.warehouse_rows import count

pytestmark = pytest.mark.slow  # four pulls, twice, per order

ORDERS = ("reference", "newest", "oldest", "id")
HEADERS = {"Authorization": f"Token {K1}"}


def changed(record: RunRecord) -> int:
    return sum(c.inserted + c.updated for c in record.counts.values())


def track_one(sandbox: RunningSandbox) -> str:
    """A new tracking request that settles with a new shipment; its id."""
    body = {
        "data": {
            "type": "tracking_request",
            "attributes": {"request_type": "bill_of_lading", "request_number": "MAEU555000111", "scac": "MAEU"},
        }
    }
    made = httpx.post(f"{sandbox.api_url}/tracking_requests", json=body, headers=HEADERS).raise_for_status().json()["data"]
    for _ in range(600):
        found = httpx.get(f"{sandbox.api_url}/tracking_requests/{made['id']}", headers=HEADERS).raise_for_status().json()["data"]
        if found["attributes"]["status"] != "pending":
            assert found["attributes"]["status"] == "created", found["attributes"]
            return str(made["id"])
        time.sleep(0.05)
    raise AssertionError("the tracking request did not settle")


def full_passes(settings: Settings) -> list[RunRecord]:
    return [
        pull_documents(settings, all_documents=True),
        pull_tracking_requests(settings, full=True),
        pull_shipments(settings),
        pull_containers(settings),
    ]


def incremental_passes(settings: Settings) -> list[RunRecord]:
    return [
        pull_documents(settings),
        pull_tracking_requests(settings),
        pull_shipments(settings, incremental=True),
        pull_containers(settings, incremental=True),
    ]


@pytest.mark.parametrize("order", ORDERS)
def test_incremental_pulls_lose_nothing_in_any_listing_order(make_sandbox: SandboxFactory, tmp_path: Path, order: str) -> None:
    # 220 documents: 110 shipments and about 220 containers, more than one page of each.
    sandbox = make_sandbox(listing_order=order, documents=220, tracking_delay_s=0.1)
    settings = settings_for(sandbox, tmp_path / "warehouse")
    full = full_passes(settings)

    moved = httpx.post(f"{sandbox.server.url}/_admin/advance?documents=5&containers=5", headers=HEADERS).raise_for_status().json()
    assert (moved["new_documents"], moved["containers"]) == (5, 5)
    request_id = track_one(sandbox)
    walked = incremental_passes(settings)
    assert all(changed(record) for record in walked), [(r.flow, r.counts) for r in walked]

    # What the incremental passes lost: what a full pass after them still finds.
    lost = {record.flow: changed(record) for record in full_passes(settings)}
    assert lost == dict.fromkeys(lost, 0)
    assert count(settings.warehouse, f"SELECT count(*) FROM tracking_requests WHERE id = '{request_id}'") == 1

    # Early stops: the documents' walk asks for its order; the shipments' and containers' walks stop
    # only where the pages show the order they rely on (newest created, most recently refreshed first).
    documents, _, shipments, containers = walked
    assert documents.stats.requests < full[0].stats.requests
    if order in ("reference", "newest"):
        assert shipments.stats.requests < full[2].stats.requests
    else:
        assert shipments.stats.requests == full[2].stats.requests
    if order == "reference":
        assert containers.stats.requests < full[3].stats.requests
