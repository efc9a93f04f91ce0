"""Documents and metro areas from their declarations: the client model, the table's row, the link
tables and the leftovers, for resources as the service may send them (members unknown, of another
type than declared, links beyond `self`, the metro area's member named "")."""

from __future__ import annotations

from typing import Any

import orjson

from shipsync.api.document_models import Document
from shipsync.api.place_models import MetroArea
from shipsync.warehouse.declared_rows import declared_tables_batch
from shipsync.warehouse.declared_tables import LINK_TABLES, declared_table
from shipsync.warehouse.normalize import document_page_columns

DOCUMENT: dict[str, Any] = {
    "id": "d-1",
    "type": "document",
    "attributes": {
        "id": "d-1",  # the spec: repeated as attributes.id (not a leftover)
        "name": "Bill of lading",
        "file_size_bytes": "2 MB",  # another type than declared: NULL in its column, kept in leftovers
        "created_at": "2026-11-01T10:00:00+02:00",
        "page_count": 4,  # a member no declaration knows
    },
    "relationships": {
        "account": {"data": {"type": "account", "id": "a-1"}},
        "shipments": {"data": [{"type": "shipment", "id": "s-1"}, {"type": "shipment", "id": "s-2"}]},
        "cargos": {"data": [], "meta": {"count": 0}},
        "reviewer": {"data": {"type": "user", "id": "u-9"}},
    },
    "links": {"self": "/v2/documents/d-1", "download": "/v2/documents/d-1/download", "preview": "/v2/documents/d-1/preview"},
}
METRO_AREA: dict[str, Any] = {
    "id": "m-1",
    "type": "metro_area",
    "attributes": {"name": "Rotterdam", "code": "NLRTM", "latitude": 51, "longitude": "east", "population": 650_000},
    "": "RTM",
}


def test_a_documents_members_go_to_their_columns_link_tables_and_leftovers() -> None:
    batch = document_page_columns([DOCUMENT], [], "2026-11-02T00:00:00+00:00")
    documents = {name: values[0] for name, values in batch["documents"].items()}
    assert (documents["id"], documents["name"], documents["account_id"], documents["user_id"]) == ("d-1", "Bill of lading", "a-1", None)
    assert documents["created_at"] == "2026-11-01T08:00:00+00:00" and documents["file_size_bytes"] is None
    assert (documents["self_link"], documents["download_link"]) == ("/v2/documents/d-1", "/v2/documents/d-1/download")
    assert documents["observed_at"] == "2026-11-02T00:00:00+00:00"
    assert orjson.loads(documents["leftovers"]) == {
        "attributes": {"file_size_bytes": "2 MB", "page_count": 4},
        "relationships": {"cargos": {"meta": {"count": 0}}, "reviewer": {"data": {"type": "user", "id": "u-9"}}},
        "links": {"preview": "/v2/documents/d-1/preview"},
    }
    assert batch["document_shipments"] == {"document_id": ["d-1", "d-1"], "shipment_id": ["s-1", "s-2"]}
    assert batch["document_containers"] == {"document_id": [], "container_id": []}
    # The table has a column for each of those, and none for the to-many relationships kept as links.
    columns = {c.name for c in declared_table(Document).columns}
    assert set(batch["documents"]) <= columns and not {"shipment_ids", "cargo_ids"} & columns
    assert {t: (link.owner_column, link.target_column) for t, link in LINK_TABLES.items()} == {
        "document_shipments": ("document_id", "shipment_id"),
        "document_containers": ("document_id", "container_id"),
    }


def test_the_document_model_reads_the_same_declaration() -> None:
    document = Document.from_resource(DOCUMENT)
    assert (document.name, document.file_size_bytes, document.download_link) == ("Bill of lading", None, "/v2/documents/d-1/download")
    assert [s.id for s in document.shipments] == ["s-1", "s-2"] and document.cargos == []
    assert document.raw["attributes"]["page_count"] == 4


def test_a_metro_area_is_keyed_by_id_and_keeps_its_unnamed_member() -> None:
    (table,) = declared_tables_batch(MetroArea, [METRO_AREA], observed_at=None).values()
    row = {name: values[0] for name, values in table.items()}
    assert (row["code"], row["id"], row["latitude"], row["longitude"], row["unnamed_member"]) == ("NLRTM", "m-1", 51.0, None, "RTM")
    assert orjson.loads(row["leftovers"]) == {"attributes": {"longitude": "east", "population": 650_000}}
    assert [c.name for c in declared_table(MetroArea).primary_key.columns] == ["id"]  # two may share a code
    metro = MetroArea.from_resource(METRO_AREA)
    assert (metro.code, metro.latitude, metro.unnamed_member) == ("NLRTM", 51.0, "RTM")


def test_an_unnamed_member_of_another_type_stays_in_the_leftovers() -> None:
    (table,) = declared_tables_batch(MetroArea, [{**METRO_AREA, "": ["not", "text"]}], observed_at=None).values()
    assert table["unnamed_member"] == [None]
    assert orjson.loads(table["leftovers"][0])[""] == ["not", "text"]
    assert MetroArea.from_resource({**METRO_AREA, "": 5}).unnamed_member is None
