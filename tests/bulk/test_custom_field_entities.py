"""Custom fields on tracking requests, and the per-entity routes (issue 12, item 7):
`/{shipments,containers,tracking_requests}/{id}/custom_fields[/{api_slug}]` in the client and the
sandbox, and the custom-fields kind keyed by request number (wide and long files), undoable."""

from __future__ import annotations

import asyncio
import csv
from pathlib import Path

import pytest

from shipsync.bulk.apply import apply_file
from shipsync.bulk.custom_fields import CustomFieldValues
from shipsync.bulk.execute import execute
from shipsync.bulk.model import Change
from shipsync.bulk.undo import undo_run
from shipsync.errors import NotFoundError, ValidationError
from support.sandboxes import K1, PulledCopies, RunningSandbox, settings_for


def write_csv(path: Path, rows: list[list[str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as out:
        csv.writer(out).writerows(rows)
    return path


async def test_per_entity_routes(sandbox: RunningSandbox) -> None:
    account = sandbox.state.world.accounts[K1]
    request_id = next(iter(account.tracking_requests))
    document = next(iter(account.documents.values()))
    shipment_id = document["relationships"]["shipments"]["data"][0]["id"]
    container_id = document["relationships"]["cargos"]["data"][0]["id"]
    async with sandbox.client() as client:
        fields = client.custom_fields
        owner = await fields.set_on_entity("tracking_request", request_id, "request_owner", "Ana")
        assert owner.entity is not None and (owner.entity.type, owner.entity.id) == ("tracking_request", request_id)
        await fields.set_on_entity("shipment", shipment_id, "consignee", "Globex")
        await fields.set_on_entity("container", container_id, "priority", "high")
        assert [cf.value for cf in await fields.of_entity("tracking_request", request_id)] == ["Ana"]
        changed = await fields.update_on_entity("container", container_id, "priority", "urgent")
        assert changed.value == "urgent" and [cf.value for cf in await fields.of_entity("container", container_id)] == ["urgent"]
        with pytest.raises(ValidationError) as wrong_entity:
            await fields.set_on_entity("shipment", shipment_id, "request_owner", "Ben")
        assert wrong_entity.value.errors[0].pointer == "/data/relationships/entity"
        await fields.delete_on_entity("tracking_request", request_id, "request_owner")
        assert await fields.of_entity("tracking_request", request_id) == []
        with pytest.raises(NotFoundError):
            await fields.of_entity("tracking_request", "no-such-request")
        with pytest.raises(NotFoundError):
            await fields.delete_on_entity("container", container_id, "request_owner")


@pytest.mark.slow
def test_values_on_tracking_requests_by_request_number(sandbox: RunningSandbox, warehouse: Path, tmp_path: Path) -> None:
    settings = settings_for(sandbox, warehouse)  # an empty warehouse: the numbers are resolved at the service
    account = sandbox.state.world.accounts[K1]
    requests = list(account.tracking_requests.values())[:3]
    numbers = [r["attributes"]["request_number"] for r in requests]
    wide = write_csv(tmp_path / "wide.csv", [["Request Number", "request_owner"], [numbers[0], "Ana"], [numbers[1].lower(), "Ben"]])
    report = apply_file(settings, "custom-fields", wide)
    assert report.counts["applied"] == 2 and not report.problems
    values = {cf["relationships"]["entity"]["data"]["id"]: cf["attributes"]["value"] for cf in account.custom_fields.values()}
    assert values == {requests[0]["id"]: "Ana", requests[1]["id"]: "Ben"}
    assert apply_file(settings, "custom-fields", wide).writes == 0
    # A long file: the definition says the key is a tracking request.
    long = write_csv(
        tmp_path / "long.csv",
        [["entity", "api_slug", "value"], [numbers[2], "request_owner", "Chen"], [numbers[0], "request_owner", "Dee"]],
    )
    second = apply_file(settings, "custom-fields", long)
    assert second.counts["applied"] == 2 and {c.entity_type for c in second.changes} == {"tracking_request"}
    undo_run(settings, second.run_id)
    undo_run(settings, report.run_id)
    assert account.custom_fields == {}


def test_a_create_refused_as_a_duplicate_finds_the_value_through_its_entity(sandbox: RunningSandbox, warehouse: Path) -> None:
    """A create whose answer was lost, then planned again: the service refuses the second create;
    the value is found through `GET /tracking_requests/{id}/custom_fields` and updated."""
    settings = settings_for(sandbox, warehouse)
    account = sandbox.state.world.accounts[K1]
    request = next(iter(account.tracking_requests.values()))

    async def earlier_create() -> None:
        async with sandbox.client() as client:
            await client.custom_fields.set_on_entity("tracking_request", request["id"], "request_owner", "Someone")

    asyncio.run(earlier_create())
    change = Change(2, "tracking_request", request["id"], "request_owner", "create", None, "Ana")
    execute(settings, CustomFieldValues(), [change])
    assert (change.status, change.action, change.before, change.detail) == ("applied", "update", "Someone", "existed already; updated")
    assert [cf["attributes"]["value"] for cf in account.custom_fields.values()] == ["Ana"]


@pytest.mark.slow
def test_values_on_shipments_by_bill_of_lading(
    sandbox: RunningSandbox, warehouse: Path, tmp_path: Path, pulled_copies: PulledCopies
) -> None:
    """The `bill_of_lading` key (any case, any header spelling) names a shipment; in a long file the
    same number names the shipment for a Shipment field and its tracking request for a TrackingRequest one."""
    _, settings = pulled_copies.pulled(sandbox, warehouse)  # shipments are known by their bills of lading once pulled
    account = sandbox.state.world.accounts[K1]
    request = next(iter(account.tracking_requests.values()))
    shipment_id = request["relationships"]["tracked_object"]["data"]["id"]
    shipment = account.resource("shipment", shipment_id)
    assert shipment is not None
    bill = shipment["attributes"]["bill_of_lading_number"]
    assert request["attributes"]["request_number"] == bill
    wide = write_csv(tmp_path / "bl.csv", [["Bill of Lading", "consignee"], [bill.lower(), "Globex"], ["NOPE123", "Acme"]])
    report = apply_file(settings, "custom-fields", wide)
    assert report.counts["applied"] == 1 and [(p.row, p.column) for p in report.problems] == [(3, "bill_of_lading")]
    long = write_csv(
        tmp_path / "long.csv", [["entity", "api_slug", "value"], [bill, "consignee", "Umbrella"], [bill, "request_owner", "Zed"]]
    )
    second = apply_file(settings, "custom-fields", long)
    assert second.counts["applied"] == 2, [(p.row, p.column, p.reason) for p in second.problems]
    values = {
        (cf["relationships"]["entity"]["data"]["type"], cf["relationships"]["entity"]["data"]["id"]): cf["attributes"]["value"]
        for cf in account.custom_fields.values()
    }
    assert values == {("shipment", shipment_id): "Umbrella", ("tracking_request", request["id"]): "Zed"}
