"""A warehouse written by schema 9 (documents, metro areas and document schemas in hand-written
tables, unknown members dropped) is migrated in place to their declared tables: every value it held
stays, and what the declarations now write on top of it (leftovers, freshness) works on the
migrated file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import orjson

from shipsync.warehouse.load import write_batch
from shipsync.warehouse.normalize import document_page_columns, document_schema_columns, metro_area_columns
from support.warehouse_rows import migrated, rows

FIXTURE = Path(__file__).parents[1] / "fixtures" / "schema_9.sql"
SYNCED = "2026-11-02 00:00:00+00"

DOCUMENT = {
    "id": "d-1",
    "type": "document",
    "attributes": {
        "id": "d-1",
        "name": "Commercial Invoice 1",
        "document_type": "commercial_invoice",
        "document_type_manual": None,
        "classification_notes": "reviewed",
        "source": "upload",
        "file_name": "invoice.pdf",
        "file_content_type": "application/pdf",
        "file_size_bytes": 2048,
        "created_at": "2026-11-01T09:00:00Z",
        "updated_at": "2026-11-01T09:05:00Z",
    },
    "relationships": {
        "account": {"data": {"type": "account", "id": "a-1"}},
        "user": {"data": {"type": "user", "id": "u-1"}},
        "email_submission": {"data": {"type": "email_submission", "id": "e-1"}},
        "last_document_representation": {"data": {"type": "document_representation", "id": "r-1"}},
        "shipments": {"data": [{"type": "shipment", "id": "s-1"}]},
        "cargos": {"data": [{"type": "container", "id": "c-1"}, {"type": "container", "id": "c-2"}]},
    },
    "links": {"self": "/v2/documents/d-1", "download": "/v2/documents/d-1/download"},
}
METRO_AREA = {
    "id": "m-1",
    "type": "metro_area",
    "attributes": {
        "name": "Los Angeles",
        "code": "USLAX",
        "state_abbr": "CA",
        "country_code": "US",
        "time_zone": "America/Los_Angeles",
        "latitude": 33.74,
        "longitude": -118.26,
    },
    "": "LA",
}
SCHEMA = {
    "id": "commercial_invoice@2026-03-23",
    "type": "document_schema",
    "attributes": {
        "document_type": "commercial_invoice",
        "label": "Commercial invoice",
        "schema_version": "2026.03.23",
        "current": True,
        "draft": False,
        "active_at": "2026-03-23T00:00:00Z",
        "schema_payload": {"type": "object", "properties": {"total": {"type": "number"}}},
    },
    "links": {"self": "/v2/document_schemas/commercial_invoice@2026-03-23"},
}


def write_schema_9_file(path: Path) -> None:
    """What schema 9's loaders wrote for DOCUMENT and METRO_AREA (its own columns, nothing else)."""
    con = duckdb.connect(str(path))
    con.execute(FIXTURE.read_text())
    a, rel = DOCUMENT["attributes"], DOCUMENT["relationships"]
    related = [rel[name]["data"]["id"] for name in ("account", "user", "email_submission", "last_document_representation")]  # type: ignore[index]
    con.execute(
        "INSERT INTO documents (_synced_at, _run_id, id, name, document_type, document_type_manual, classification_notes, source, "
        "file_name, file_content_type, file_size_bytes, created_at, updated_at, account_id, user_id, email_submission_id, "
        "last_document_representation_id, self_link, download_link) VALUES "
        f"(TIMESTAMPTZ '{SYNCED}', 'run-1', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            DOCUMENT["id"],
            *(a[k] for k in ("name", "document_type", "document_type_manual", "classification_notes", "source", "file_name")),  # type: ignore[index]
            *(a[k] for k in ("file_content_type", "file_size_bytes", "created_at", "updated_at")),  # type: ignore[index]
            *related,
            "/v2/documents/d-1",
            "/v2/documents/d-1/download",
        ],
    )
    con.execute(f"INSERT INTO document_shipments VALUES (TIMESTAMPTZ '{SYNCED}', 'run-1', 'd-1', 's-1')")
    for container_id in ("c-1", "c-2"):
        con.execute(f"INSERT INTO document_containers VALUES (TIMESTAMPTZ '{SYNCED}', 'run-1', 'd-1', ?)", [container_id])
    m = METRO_AREA["attributes"]
    con.execute(
        f"INSERT INTO metro_areas VALUES (TIMESTAMPTZ '{SYNCED}', 'run-1', ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [m["code"], METRO_AREA["id"], m["name"], m["state_abbr"], m["country_code"], m["time_zone"], m["latitude"], m["longitude"], "LA"],  # type: ignore[index]
    )
    s: dict[str, Any] = SCHEMA["attributes"]  # type: ignore[assignment]
    payload = orjson.dumps(s["schema_payload"], option=orjson.OPT_SORT_KEYS).decode()
    con.execute(
        "INSERT INTO document_schemas (_synced_at, _run_id, id, document_type, label, schema_version, current, draft, active_at, "
        f"schema_payload, self_link) VALUES (TIMESTAMPTZ '{SYNCED}', 'run-1', ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            SCHEMA["id"],
            *(s[k] for k in ("document_type", "label", "schema_version", "current", "draft", "active_at")),
            payload,
            SCHEMA["links"]["self"],
        ],  # type: ignore[index]
    )
    con.close()


def with_more(resource: dict[str, Any], **attributes: Any) -> dict[str, Any]:
    return {**resource, "attributes": {**resource["attributes"], **attributes}}


def test_schema_9_file_migrates_to_declared_documents_and_metro_areas(tmp_path: Path) -> None:
    path = tmp_path / "old.duckdb"
    write_schema_9_file(path)
    own = migrated(path, "documents")

    (document,) = rows(own, "SELECT * FROM documents")
    assert (document["name"], document["file_size_bytes"], document["created_at"].isoformat()) == (
        "Commercial Invoice 1",
        2048,
        "2026-11-01T09:00:00+00:00",
    )
    assert (document["account_id"], document["last_document_representation_id"], document["download_link"]) == (
        "a-1",
        "r-1",
        "/v2/documents/d-1/download",
    )
    assert document["leftovers"] is None and document["observed_at"] is None and document["first_seen_at"] is None
    assert document["last_changed_at"] == document["_synced_at"] and document["_run_id"] == "run-1"
    assert rows(own, "SELECT container_id FROM document_containers ORDER BY 1") == [{"container_id": "c-1"}, {"container_id": "c-2"}]
    (metro,) = rows(own, "SELECT * FROM metro_areas")
    assert (metro["code"], metro["id"], metro["latitude"], metro["unnamed_member"]) == ("USLAX", "m-1", 33.74, "LA")
    assert metro["last_changed_at"] == metro["_synced_at"] and metro["leftovers"] is None

    # The same document pulled again is what the migrated row holds: unchanged, only its stamp moves.
    observed = "2026-11-03T00:00:00+00:00"
    counts = write_batch(path, document_page_columns([DOCUMENT], [], observed), run_id="run-2", link_owners={"document_shipments": ["d-1"]})
    assert counts["documents"].unchanged == 1 and counts["document_shipments"].unchanged == 1
    assert rows(own, "SELECT _run_id, observed_at FROM documents")[0]["_run_id"] == "run-1"

    # Members the declarations do not know are kept from now on, in the migrated tables too.
    newer = with_more(DOCUMENT, page_count=3)
    newer["links"] = {**DOCUMENT["links"], "preview": "/v2/documents/d-1/preview"}  # type: ignore[dict-item]
    owners = {"document_shipments": ["d-1"], "document_containers": ["d-1"]}
    counts = write_batch(path, document_page_columns([newer], [], "2026-11-04T00:00:00+00:00"), run_id="run-3", link_owners=owners)
    assert counts["documents"].updated == 1
    (document,) = rows(own, "SELECT * FROM documents")
    assert orjson.loads(document["leftovers"]) == {"attributes": {"page_count": 3}, "links": {"preview": "/v2/documents/d-1/preview"}}
    assert document["name"] == "Commercial Invoice 1" and document["_run_id"] == "run-3"

    # A document schema read again is unchanged too; what its table did not know is kept from now on.
    (schema,) = rows(own, "SELECT * FROM document_schemas")
    assert (schema["current"], schema["last_changed_at"], schema["leftovers"]) == (True, schema["_synced_at"], None)
    assert orjson.loads(schema["schema_payload"]) == SCHEMA["attributes"]["schema_payload"]  # type: ignore[index]
    assert write_batch(path, document_schema_columns([SCHEMA], observed), run_id="run-2")["document_schemas"].unchanged == 1
    counts = write_batch(path, document_schema_columns([with_more(SCHEMA, locale="en")], observed), run_id="run-3")
    assert counts["document_schemas"].updated == 1
    assert orjson.loads(rows(own, "SELECT leftovers FROM document_schemas")[0]["leftovers"]) == {"attributes": {"locale": "en"}}

    counts = write_batch(path, metro_area_columns([with_more(METRO_AREA, population=12_000_000)], observed), run_id="run-3")
    assert counts["metro_areas"].updated == 1
    (metro,) = rows(own, "SELECT * FROM metro_areas")
    assert orjson.loads(metro["leftovers"]) == {"attributes": {"population": 12_000_000}}
    assert (metro["code"], metro["name"], metro["unnamed_member"]) == ("USLAX", "Los Angeles", "LA")
