"""The product's requests in the shapes the reference takes (issue 35): `page[size]` only to the
listings that declare paging, a definition's `default_value` as a value of its data type (a boolean
`false`, not the text "false"), and a date-time value with its offset (a spreadsheet's zone-less
time read as UTC)."""

from __future__ import annotations

import asyncio
import csv
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from shipsync.api import AsyncShipsyncClient
from shipsync.bulk.apply import apply_file
from shipsync.bulk.cells import cell_value
from shipsync.bulk.definitions import DefinitionEdits
from shipsync.bulk.lookup import Knowledge
from shipsync.bulk.reader import read_sheet
from shipsync.values import FieldRules
from shipsync_sandbox import SandboxOptions, create_app
from support.contract_checks import request_problems
from support.contract_schemas import REFERENCE
from support.sandbox_transport import IN_PROCESS_URL, SandboxTransport
from support.sandboxes import K1, SandboxFactory, settings_for


def test_page_size_goes_only_to_listings_that_declare_paging() -> None:
    app = create_app(SandboxOptions(api_keys=(K1,), documents=4, record_exchanges=True))
    account = app.state.world.accounts[K1]
    container = account.of_type("container")[0]["id"]
    priority = next(d["id"] for d in account.definitions.values() if d["attributes"]["api_slug"] == "priority")
    tracking_request = next(iter(account.tracking_requests))

    async def read() -> None:
        async with AsyncShipsyncClient(IN_PROCESS_URL, K1, rate_limit=None, http_transport=SandboxTransport(app)) as client:
            await client.shipping_lines.list_page()
            await client.containers.transport_events(container)
            await client.custom_field_definitions.options(priority)
            await client.custom_fields.of_entity("tracking_request", tracking_request)
            await client.custom_fields.of_entity("container", container)
            [page async for page in client.documents.list_pages(max_pages=1)]
            [page async for page in client.custom_fields.list_pages()]

    asyncio.run(read())
    assert app.exchanges is not None
    sent = {(e.method, e.path.split("/")[2]): e for e in app.exchanges.exchanges}
    assert len(sent) == 6  # shipping lines, containers, definitions, tracking requests, documents, custom fields
    problems = [f"{e.path}?{e.query}: {p}" for e in app.exchanges.exchanges for p in request_problems(e)]
    assert not problems, problems
    paged = {e.path.split("/")[2] for e in app.exchanges.exchanges if "page%5Bsize%5D" in e.query}
    assert paged == {"documents", "custom_fields"}  # the two whose operations declare `page[size]`
    operation = REFERENCE.operation("GET", "/v2/shipping_lines")
    assert operation is not None and REFERENCE.query_problems(operation, "page%5Bsize%5D=100")  # what it was sent before


def _planned_default(folder: Path, data_type: str, cell: str) -> object:
    """The `default_value` a definitions file's row plans to send."""
    file = folder / "definitions.csv"
    with file.open("w", newline="", encoding="utf-8") as out:
        csv.writer(out).writerows(
            [["entity_type", "api_slug", "display_name", "data_type", "default_value"], ["Container", "typed", "Typed", data_type, cell]]
        )
    changes, problems = DefinitionEdits().plan(read_sheet(file), Knowledge())
    assert not problems, problems
    (change,) = changes
    assert change.after is not None
    return change.after["default_value"]


@pytest.mark.parametrize(
    ("data_type", "cell", "sent"),
    [
        ("boolean", "false", False),
        ("boolean", "Yes", True),
        ("number", "12", 12),
        ("number", "1,234.50", 1234.5),
        ("datetime", "2026-05-11 18:30", "2026-05-11T18:30:00Z"),
        ("short_text", "false", "false"),
    ],
)
def test_a_definitions_default_value_is_sent_as_a_value_of_its_data_type(tmp_path: Path, data_type: str, cell: str, sent: object) -> None:
    planned = _planned_default(tmp_path, data_type, cell)
    assert planned == sent and type(planned) is type(sent)


@pytest.mark.parametrize(
    ("cell", "sent"),
    [
        ("2026-05-11 18:30", "2026-05-11T18:30:00Z"),  # written without a zone: read as UTC
        ("2026-05-11T18:30:00+02:00", "2026-05-11T18:30:00+02:00"),  # its own offset kept
        (datetime(2026, 5, 11, 18, 30), "2026-05-11T18:30:00Z"),  # a workbook's date-time (no zone)
        (datetime(2026, 5, 11, 18, 30, tzinfo=UTC), "2026-05-11T18:30:00Z"),
        (date(2026, 5, 11), "2026-05-11T00:00:00Z"),
    ],
)
def test_a_datetime_value_is_sent_with_its_offset(cell: str | datetime | date, sent: str) -> None:
    value = cell_value(cell, FieldRules("datetime"))
    assert value == sent
    assert datetime.fromisoformat(value.replace("Z", "+00:00")).tzinfo is not None


@pytest.mark.slow
def test_a_tracking_edit_of_a_request_that_tracks_no_shipment_is_refused_on_its_row(
    make_sandbox: SandboxFactory, warehouse: Path, tmp_path: Path
) -> None:
    """The reference gives a pending or failed request no shipment: tagging one is that row's
    refusal, said plainly, and the other rows still apply."""
    sandbox = make_sandbox()
    account = sandbox.state.world.accounts[K1]
    requests = list(account.tracking_requests.values())
    pending = next(r for r in requests if r["attributes"]["status"] == "pending")
    tracking = next(r for r in requests if r["relationships"]["tracked_object"]["data"])
    file = tmp_path / "edits.csv"
    with file.open("w", newline="", encoding="utf-8") as out:
        rows = [
            ["request_number", "tags_add"],
            [pending["attributes"]["request_number"], "x"],
            [tracking["attributes"]["request_number"], "y"],
        ]
        csv.writer(out).writerows(rows)
    report = apply_file(settings_for(sandbox, warehouse), "tracking-requests", file)
    assert [(p.row, p.column, p.reason) for p in report.problems] == [
        (2, "tags_add", "this tracking request tracks no shipment yet: nothing to tag")
    ]
    assert report.counts["applied"] == 1
