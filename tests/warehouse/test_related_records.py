"""A document's related records in their real shapes (issue 12, item 9): an email submission's
`from`, `to`, `cc`, `sent_at`...; an extraction's public `schema_version` and `payload`, matched
to its schema through the document's type, so `pull document-schemas` finds the schemas used."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from shipsync.pull.documents import pull_documents
from shipsync.pull.reference import pull_document_schemas, schema_id
from support.lake import fetch
from support.sandboxes import RunningSandbox, settings_for


@pytest.mark.slow
def test_related_records_and_the_schemas_they_name(sandbox: RunningSandbox, warehouse: Path) -> None:
    settings = settings_for(sandbox, warehouse)
    pull_documents(settings, all_documents=True)
    emails = fetch(warehouse, 'SELECT "from", "to", cc, subject, sent_at, leftovers FROM email_submissions')
    # Every member the sandbox sends has its typed column; nothing was left over.
    assert emails and all(e[0] and isinstance(e[1], list) and isinstance(e[2], list) and e[3] and e[4] and e[5] is None for e in emails)
    extractions = fetch(warehouse, "SELECT schema_version, payload, created_at, updated_at, leftovers FROM document_representations")
    assert extractions and all(x[0] and "@" not in str(x[0]) and x[1] and x[2] and x[3] and x[4] is None for x in extractions)

    run = pull_document_schemas(settings)  # no ids: discovered from the extractions
    assert not run.errors and run.counts["document_schemas"].inserted == 4
    current = {"commercial_invoice@2026-03-23", "packing_list@2026-01-15", "bill_of_lading@2026-02-10", "arrival_notice@2026-04-01"}
    assert {i for (i,) in fetch(warehouse, "SELECT id FROM document_schemas")} == current
    assert fetch(warehouse, "SELECT count(*) FROM document_overview WHERE extracted_with_schema IS NULL") == [(0,)]
    # Each payload follows its schema: the schema's required fields are there.
    rows = fetch(
        warehouse,
        "SELECT r.payload, s.schema_payload->'required' FROM documents d "
        "JOIN document_representations r ON r.id = d.last_document_representation_id "
        "JOIN document_schemas s ON s.id = (SELECT extracted_with_schema FROM document_overview o WHERE o.document_id = d.id)",
    )
    assert rows and all(set(orjson.loads(str(req))) <= set(orjson.loads(str(payload))) for payload, req in rows)


@pytest.mark.parametrize(
    ("document_type", "version", "expected"),
    [
        ("commercial_invoice", "2026.03.23", "commercial_invoice@2026-03-23"),
        ("packing_list", "2026-01-15", "packing_list@2026-01-15"),
        ("bill_of_lading", "v20260210", "bill_of_lading@2026-02-10"),
        ("arrival_notice", "arrival_notice@2026-04-01", "arrival_notice@2026-04-01"),
        ("arrival_notice", "3.1", None),
        ("", "2026.03.23", None),
    ],
)
def test_schema_ids_from_type_and_version(document_type: str, version: str, expected: str | None) -> None:
    assert schema_id(document_type, version) == expected
