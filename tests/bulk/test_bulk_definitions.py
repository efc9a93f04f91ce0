"""Definitions and options as the service takes them (issue 12, items 2, 5 and 6): `Cargo` is sent
as `Container`; existing `Container` and `TrackingRequest` definitions are edited, not refused;
definitions and options are edited (PATCH), added, relabelled, reordered, removed, and undone;
validation rules beyond the three known ones are kept, and odd rule values never crash planning."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest

from shipsync.bulk.apply import apply_file
from shipsync.bulk.undo import undo_run
from shipsync.config import Settings
from shipsync.errors import ValidationError
from shipsync.pull.documents import pull_documents
from support.sandboxes import K1, RunningSandbox, SandboxFactory, settings_for

HEADER = ["entity_type", "api_slug", "display_name", "data_type", "description", "max_length", "options"]


def write_csv(path: Path, rows: list[list[str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as out:
        csv.writer(out).writerows(rows)
    return path


def definition(sandbox: RunningSandbox, slug: str) -> dict[str, Any]:
    world = sandbox.state.world
    found = world.definition_by_slug(world.accounts[K1], slug)
    assert found is not None, slug
    return found


def options(sandbox: RunningSandbox, slug: str) -> list[tuple[str, str, int]]:
    world = sandbox.state.world
    listed = world.options_of(world.accounts[K1], definition(sandbox, slug)["id"])
    return sorted((o["attributes"]["value"], o["attributes"]["label"], o["attributes"]["position"]) for o in listed)


@pytest.fixture
def settings(sandbox: RunningSandbox, warehouse: Path) -> Settings:
    return settings_for(sandbox, warehouse)


def test_entity_types_as_the_service_takes_them(sandbox: RunningSandbox, settings: Settings, tmp_path: Path) -> None:
    rows = [
        HEADER,
        ["Cargo", "seal", "Seal", "short_text", "", "", ""],  # the spec's name for containers: sent as Container
        ["Cargo", "po_number", "PO Number", "short_text", "", "", ""],  # an existing Container template: no conflict
        ["TrackingRequest", "request_owner", "Owner", "short_text", "", "", ""],  # an existing one: edited
        ["Tracking Request", "new_on_requests", "New", "short_text", "", "", ""],  # cannot be created through the API
    ]
    report = apply_file(settings, "custom-field-definitions", write_csv(tmp_path / "d.csv", rows))
    assert definition(sandbox, "seal")["attributes"]["entity_type"] == "Container"
    assert definition(sandbox, "request_owner")["attributes"]["display_name"] == "Owner"
    assert [(p.row, p.column) for p in report.problems] == [(5, "entity_type")]
    assert "only on Shipment or Container" in report.problems[0].reason
    assert {c.row: c.status for c in report.changes} == {2: "applied", 3: "unchanged", 4: "applied"}


async def test_the_sandbox_takes_shipment_or_container_and_keeps_unknown_rules(sandbox: RunningSandbox) -> None:
    async with sandbox.client() as client:
        with pytest.raises(ValidationError) as refused:
            await client.custom_field_definitions.create(entity_type="Cargo", api_slug="x1", display_name="X", data_type="short_text")
        assert refused.value.errors[0].pointer == "/data/attributes/entity_type"
        rules = {"required": True, "min_length": 3, "allowed_chars": "A-Z"}
        made = await client.custom_field_definitions.create(
            entity_type="Shipment", api_slug="x2", display_name="X", data_type="short_text", validation=rules
        )
        assert made.validation == rules and (await client.custom_field_definitions.get(made.id)).validation == rules
        # The reference states no rule's structure: one the service cannot use is kept, not refused.
        kept = await client.custom_field_definitions.update(made.id, {"validation": {"max_length": "twelve"}})
        assert kept.validation == {"max_length": "twelve"}


@pytest.mark.slow
def test_definitions_and_options_are_edited_and_undone(sandbox: RunningSandbox, settings: Settings, tmp_path: Path) -> None:
    first = write_csv(
        tmp_path / "d1.csv", [HEADER, ["Container", "broker", "Broker", "enum", "Who clears it", "", "acme; globex; initech"]]
    )
    created = apply_file(settings, "custom-field-definitions", first)
    assert created.counts["applied"] == 1 and options(sandbox, "broker") == [
        ("acme", "Acme", 0),
        ("globex", "Globex", 1),
        ("initech", "Initech", 2),
    ]
    # The service's own unknown rule on it: kept when the spreadsheet edits the known ones.
    definition(sandbox, "broker")["attributes"]["validation"] = {"case_sensitive": False}
    second = write_csv(
        tmp_path / "d2.csv",
        [HEADER, ["Container", "broker", "Customs broker", "enum", "Who clears the container", "20", "initech; acme=Acme Corp; umbrella"]],
    )
    edited = apply_file(settings, "custom-field-definitions", second)
    assert not edited.problems and edited.counts["applied"] == 5  # the definition, then: remove, relabel, move, add
    attributes = definition(sandbox, "broker")["attributes"]
    assert (attributes["display_name"], attributes["description"]) == ("Customs broker", "Who clears the container")
    assert attributes["validation"] == {"case_sensitive": False, "max_length": 20}
    assert options(sandbox, "broker") == [("acme", "Acme Corp", 1), ("initech", "Initech", 0), ("umbrella", "Umbrella", 2)]
    assert apply_file(settings, "custom-field-definitions", second).writes == 0  # the same file again: nothing to send

    undone = undo_run(settings, edited.run_id)
    assert undone.counts["applied"] == 5
    attributes = definition(sandbox, "broker")["attributes"]
    assert (attributes["display_name"], attributes["description"]) == ("Broker", "Who clears it")
    assert attributes["validation"] == {"case_sensitive": False}
    assert options(sandbox, "broker") == [("acme", "Acme", 0), ("globex", "Globex", 1), ("initech", "Initech", 2)]
    assert undo_run(settings, created.run_id).counts["applied"] == 1  # a created definition is deleted
    world = sandbox.state.world
    assert world.definition_by_slug(world.accounts[K1], "broker") is None


@pytest.mark.slow
def test_odd_rule_values_never_crash_planning(make_sandbox: SandboxFactory, warehouse: Path, tmp_path: Path) -> None:
    sandbox = make_sandbox(documents=20)
    settings = settings_for(sandbox, warehouse)
    pull_documents(settings, all_documents=True)
    # As the service may hold them: a max_length that is not a number, a rule nobody knows.
    definition(sandbox, "po_number")["attributes"]["validation"] = {"max_length": "twenty", "pattern": 7, "checksum": "mod11"}
    account = sandbox.state.world.accounts[K1]
    linked = {ref["id"] for d in account.documents.values() for ref in d["relationships"]["cargos"]["data"]}  # pulled, so known
    containers = [c["attributes"]["number"] for c in account.of_type("container") if c["id"] in linked]
    rows = [["container_number", "po_number", "priority"], [containers[0], "lower case ok", "high"], [containers[1], "PO-2", "rush"]]
    report = apply_file(settings, "custom-fields", write_csv(tmp_path / "v.csv", rows))
    assert report.counts["applied"] == 3 and [(p.row, p.column) for p in report.problems] == [(3, "priority")]


def test_only_the_services_rules_are_checked_locally_and_its_refusals_show_their_pointer(
    sandbox: RunningSandbox, settings: Settings, tmp_path: Path
) -> None:
    """Issue 28, item 1: slugs the service takes (`PO-Number`, `1st_field`, 65 characters), an enum
    without options and a max_length the service keeps are sent and created; what the service
    refuses is its 422, shown on the row with the member it points at."""
    long_slug = "s" * 65
    rows = [
        HEADER,
        ["Container", "PO-Number", "PO Number", "short_text", "", "", ""],
        ["Container", "1st_field", "First", "short_text", "", "", ""],
        ["Shipment", long_slug, "Long", "short_text", "", "", ""],
        ["Container", "bare_enum", "Bare", "enum", "", "twelve", ""],
        ["Container", "colour", "Colour", "colour", "", "", ""],
    ]
    report = apply_file(settings, "custom-field-definitions", write_csv(tmp_path / "d.csv", rows))
    assert report.problems == []
    assert {c.row: c.status for c in report.changes} == {2: "applied", 3: "applied", 4: "applied", 5: "applied", 6: "failed"}
    for slug in ("PO-Number", "1st_field", long_slug, "bare_enum"):
        assert definition(sandbox, slug)["attributes"]["api_slug"] == slug
    assert definition(sandbox, "bare_enum")["attributes"]["validation"] == {"max_length": "twelve"}
    refused = next(c for c in report.changes if c.row == 6)
    assert "data_type must be one of" in refused.detail and "at /data/attributes/data_type" in refused.detail
