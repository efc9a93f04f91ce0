"""Bulk apply reads only what it must: the current values of the file's entities and fields, through
the account's listing, a listing per definition or each entity's own route, whichever costs fewer
requests (from `meta.total`), counted at the sandbox; and every write is based on what the service
has when the run starts, whoever changed it since the last run."""

from __future__ import annotations

import csv
import logging
import math
from pathlib import Path

import pytest

from shipsync.bulk.apply import apply_file
from shipsync.config import Settings
from shipsync_sandbox.custom_field_store import custom_field_resource
from shipsync_sandbox.seed import definition_resource
from shipsync_sandbox.world import Account
from support.lake import analyst
from support.sandboxes import K1, PulledCopies, RunningSandbox, SandboxFactory
from support.warehouse_rows import container_numbers

EXTRA_FIELDS = 40  # short-text container fields, each with a value on every container


def _account(sandbox: RunningSandbox) -> Account:
    account: Account = sandbox.state.world.accounts[K1]
    return account


def _values(sandbox: RunningSandbox) -> dict[tuple[str, str], object]:
    return {
        (cf["relationships"]["entity"]["data"]["id"], cf["attributes"]["api_slug"]): cf["attributes"]["value"]
        for cf in _account(sandbox).custom_fields.values()
    }


def _value_of(sandbox: RunningSandbox, container_id: str, slug: str) -> dict[str, object]:
    return next(
        cf
        for cf in _account(sandbox).custom_fields.values()
        if cf["relationships"]["entity"]["data"]["id"] == container_id and cf["attributes"]["api_slug"] == slug
    )


@pytest.fixture
def busy(
    make_sandbox: SandboxFactory, warehouse: Path, pulled_copies: PulledCopies
) -> tuple[RunningSandbox, Settings, list[dict[str, object]]]:
    """An account whose every container carries EXTRA_FIELDS values: its listing is many pages."""
    sandbox, settings = pulled_copies.pulled(make_sandbox(documents=30), warehouse)
    account = _account(sandbox)
    with analyst(warehouse) as con:  # the containers the pulled documents name
        pulled = {r[0] for r in con.execute("SELECT id FROM containers").fetchall()}
    containers = [c for c in account.of_type("container") if c["id"] in pulled]
    for n in range(EXTRA_FIELDS):
        spec = {"entity_type": "Container", "api_slug": f"extra_{n}", "display_name": f"Extra {n}", "data_type": "short_text"}
        definition, _ = definition_resource(f"extra-definition-{n}", spec)
        account.definitions[definition["id"]] = definition
        for container in containers:
            value = custom_field_resource(definition, ("container", container["id"]), "old", "old")
            account.custom_fields[value["id"]] = value
    return sandbox, settings, containers


def _file(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    with path.open("w", newline="") as out:
        csv.writer(out).writerows([header, *rows])
    return path


def _value_reads(caplog: pytest.LogCaptureFixture) -> int:
    """GETs of custom field values the sandbox answered: listings (filtered or not) and entity routes."""
    # The message, not record.args: the redaction filter an entry point installs folds args into msg.
    lines = [r.getMessage().split() for r in caplog.records if r.name == "shipsync_sandbox"]
    return sum(1 for method, path, *_ in lines if method == "GET" and path.endswith("/custom_fields"))


def _route(caplog: pytest.LogCaptureFixture) -> str:
    return next(r.getMessage() for r in caplog.records if r.name == "shipsync.bulk" and r.getMessage().startswith("reading "))


@pytest.mark.slow
def test_a_few_rows_on_a_busy_account_cost_a_read_per_entity_not_the_listing(
    busy: tuple[RunningSandbox, Settings, list[dict[str, object]]], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    sandbox, settings, containers = busy
    listing_pages = math.ceil(len(_account(sandbox).custom_fields) / 100)
    assert listing_pages >= 10
    chosen = containers[:3]
    slugs = [f"extra_{n}" for n in range(5)]
    rows = [[str(c["attributes"]["number"]), *(f"{s}-{i}" for s in slugs)] for i, c in enumerate(chosen)]  # type: ignore[index]
    file = _file(tmp_path / "three.csv", ["container_number", *slugs], rows)
    caplog.set_level(logging.INFO)
    first = apply_file(settings, "custom-fields", file)
    assert first.counts["applied"] == 15 and not first.problems
    assert _value_reads(caplog) == 1 + 3  # the listing's first page (its total), then each entity's own route
    assert _route(caplog).startswith("reading the values of the file's entities")
    caplog.clear()
    again = apply_file(settings, "custom-fields", file)
    assert again.writes == 0 and again.counts["unchanged"] == 15 and _value_reads(caplog) == 4


@pytest.mark.slow
def test_one_field_on_every_container_is_read_by_its_definition(
    busy: tuple[RunningSandbox, Settings, list[dict[str, object]]], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    sandbox, settings, containers = busy
    rows = [[str(c["attributes"]["number"]), f"new-{i}"] for i, c in enumerate(containers)]  # type: ignore[index]
    file = _file(tmp_path / "one_field.csv", ["container_number", "extra_7"], rows)
    caplog.set_level(logging.INFO)
    report = apply_file(settings, "custom-fields", file)
    assert len(containers) > 2 and report.counts["applied"] == len(containers)
    assert _value_reads(caplog) == 2  # the listing's first page, then the field's one page
    assert _route(caplog).startswith("reading the values of the file's fields")
    assert all(_values(sandbox)[(str(c["id"]), "extra_7")] == f"new-{i}" for i, c in enumerate(containers))


@pytest.mark.slow
def test_a_small_account_is_read_whole_in_one_request(
    make_sandbox: SandboxFactory, warehouse: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture, pulled_copies: PulledCopies
) -> None:
    _, settings = pulled_copies.pulled(make_sandbox(documents=30), warehouse)
    numbers = container_numbers(warehouse, 10_000)
    rows = [[number, f"PO-{i}", "high"] for i, number in enumerate(numbers)]
    file = _file(tmp_path / "small.csv", ["container_number", "po_number", "priority"], rows)
    caplog.set_level(logging.INFO)
    apply_file(settings, "custom-fields", file)
    assert _value_reads(caplog) == 1 and _route(caplog).startswith("reading the account's values")


@pytest.mark.slow
def test_writes_follow_what_the_service_has_now_not_what_the_last_run_saw(
    busy: tuple[RunningSandbox, Settings, list[dict[str, object]]], tmp_path: Path
) -> None:
    sandbox, settings, containers = busy
    first_id, second_id, third_id = (str(c["id"]) for c in containers[:3])
    slugs = ["extra_0", "extra_1"]
    rows = [[str(c["attributes"]["number"]), *(f"{s}-{i}" for s in slugs)] for i, c in enumerate(containers[:3])]  # type: ignore[index]
    file = _file(tmp_path / "three.csv", ["container_number", *slugs], rows)
    assert apply_file(settings, "custom-fields", file).counts["applied"] == 6
    # Since that run, someone else set one value to what the file says, changed one, deleted one.
    _value_of(sandbox, first_id, "extra_0")["attributes"]["value"] = "extra_0-0"  # type: ignore[index]
    _value_of(sandbox, second_id, "extra_0")["attributes"]["value"] = "changed in the app"  # type: ignore[index]
    del _account(sandbox).custom_fields[str(_value_of(sandbox, third_id, "extra_1")["id"])]
    again = apply_file(settings, "custom-fields", file)
    written = sorted((c.entity_id, c.field, c.action, c.status) for c in again.changes if c.action != "skip")
    assert written == sorted([(second_id, "extra_0", "update", "applied"), (third_id, "extra_1", "create", "applied")])
    assert all(_values(sandbox)[(cid, s)] == f"{s}-{i}" for i, cid in enumerate((first_id, second_id, third_id)) for s in slugs)


@pytest.mark.parametrize(
    ("links", "meta", "pages"),
    [
        ({}, {"total": 5000}, 1),  # no next page: this is the only one, whatever the total says
        ({"next": "n"}, {"total": 1001, "size": 100}, 11),
        ({"next": "n"}, {"total": 1001, "size": 25}, 41),
        ({"next": "n", "last": "https://x/v2/custom_fields?page%5Bsize%5D=100&page[number]=7"}, {}, 7),
        ({"next": {"href": "n"}, "last": {"href": "/v2/custom_fields?page[number]=3"}}, {"total": None}, 3),
        ({"next": "n"}, {"total": "many"}, math.inf),  # nothing says: never chosen for being cheap
    ],
)
def test_a_listing_s_pages_come_from_its_first_page(links: dict[str, object], meta: dict[str, object], pages: float) -> None:
    from shipsync.api.jsonapi import Page
    from shipsync.bulk.read_values import pages_of

    assert pages_of(Page([], [], links, meta)) == pages
