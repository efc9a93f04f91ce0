"""A warehouse written by schema 9 (the account's tracking requests, custom fields and webhooks in
hand-written tables) is migrated in place to their declared tables: every value stays, a tracking
request's `last_event_at` becomes its freshness stamp, and the declarations' writes work on it."""

from __future__ import annotations

from pathlib import Path

import duckdb
import orjson

from shipsync.warehouse.load import write_batch
from shipsync.warehouse.normalize import custom_field_columns, definition_columns, tracking_request_columns, webhook_columns
from support.warehouse_rows import migrated, rows

FIXTURE = Path(__file__).parents[1] / "fixtures" / "schema_9.sql"
SYNCED = "TIMESTAMPTZ '2026-11-02 00:00:00+00'"
DELIVERED = "2026-11-01T12:00:00+00:00"  # the delivery the tracking request last took

REQUEST = {
    "id": "tr-1",
    "type": "tracking_request",
    "attributes": {
        "request_number": "MAEU123456789",
        "status": "created",
        "request_type": "bill_of_lading",
        "scac": "MAEU",
        "ref_numbers": ["PO-1"],
        "shipment_tags": ["hot"],
        "retry_count": 0,
    },
    "relationships": {"tracked_object": {"data": {"type": "shipment", "id": "s-1"}}, "customer": {"data": None}},
    "links": {"self": "/v2/tracking_requests/tr-1"},
}
DEFINITION = {
    "id": "d-1",
    "type": "custom_field_definition",
    "attributes": {
        "entity_type": "Container",
        "api_slug": "po_number",
        "display_name": "PO",
        "data_type": "string",
        "validation": {"required": False, "max_length": 20},
        "default_value": None,
    },
}


def write_schema_9_file(path: Path) -> None:
    """What schema 9 wrote for the account's records (its own columns, nothing else)."""
    con = duckdb.connect(str(path))
    con.execute(FIXTURE.read_text())
    con.execute(
        "INSERT INTO tracking_requests (_synced_at, _run_id, id, request_number, status, request_type, scac, ref_numbers, tags, "
        f"ref_number, retry_count, tracked_object_type, tracked_object_id, self_link, last_event_at, last_event_id) VALUES ({SYNCED}, "
        "'run-1', 'tr-1', 'MAEU123456789', 'created', 'bill_of_lading', 'MAEU', ['PO-1'], ['hot'], 'REQ-1', 0, 'shipment', 's-1', "
        f"'/v2/tracking_requests/tr-1', TIMESTAMPTZ '{DELIVERED}', 'n-9')"
    )
    con.execute(
        "INSERT INTO custom_field_definitions (_synced_at, _run_id, id, entity_type, api_slug, display_name, data_type, validation, "
        f"default_value) VALUES ({SYNCED}, 'run-1', 'd-1', 'Container', 'po_number', 'PO', 'string', "
        """'{"max_length":20,"required":false}', NULL)"""
    )
    con.execute(f"INSERT INTO custom_field_options VALUES ({SYNCED}, 'run-1', 'o-1', 'd-2', 'Cold', 'cold', 1)")
    con.execute(
        "INSERT INTO custom_fields (_synced_at, _run_id, id, api_slug, value, display_value, entity_type, entity_id, definition_id) "
        f"""VALUES ({SYNCED}, 'run-1', 'cf-1', 'po_number', '"PO-7"', 'PO-7', 'container', 'c-1', 'd-1')"""
    )
    con.execute(
        "INSERT INTO webhooks (_synced_at, _run_id, id, url, active, events, headers) "
        f"""VALUES ({SYNCED}, 'run-1', 'w-1', 'https://x', true, ['container.updated'], '[{{"name":"Authorization"}}]')"""
    )
    con.execute(f"INSERT INTO accounts VALUES ({SYNCED}, 'run-1', 'a-1', 'ACME Imports')")
    user = ('{"email":"kim@example.com","name":"Kim"}', '{"account":{"data":{"id":"a-1","type":"account"}}}')
    con.execute(
        "INSERT INTO users (_synced_at, _run_id, id, attributes, relationships, first_seen_at, last_changed_at, last_event_at) "
        f"VALUES ({SYNCED}, 'run-1', 'u-1', ?, ?, {SYNCED}, {SYNCED}, NULL)",
        list(user),
    )
    con.close()


def test_schema_9_account_records_migrate_to_their_declared_tables(tmp_path: Path) -> None:
    path = tmp_path / "old.duckdb"
    write_schema_9_file(path)
    own = migrated(path, "tracking_requests")

    (request,) = rows(own, "SELECT * FROM tracking_requests")
    assert "last_event_at" not in request
    assert (request["request_number"], request["tags"], request["ref_numbers"], request["ref_number"]) == (
        "MAEU123456789",
        ["hot"],
        ["PO-1"],
        "REQ-1",
    )
    assert (request["tracked_object_type"], request["tracked_object_id"], request["last_event_id"]) == ("shipment", "s-1", "n-9")
    assert request["observed_at"].isoformat() == DELIVERED and request["last_changed_at"] == request["_synced_at"]
    (definition,) = rows(own, "SELECT * FROM custom_field_definitions")
    assert orjson.loads(definition["validation"]) == {"required": False, "max_length": 20} and definition["option_ids"] is None
    assert rows(own, "SELECT definition_id, label, value, position FROM custom_field_options") == [
        {"definition_id": "d-2", "label": "Cold", "value": "cold", "position": 1}
    ]
    (value,) = rows(own, "SELECT * FROM custom_fields")
    assert (orjson.loads(value["value"]), value["entity_type"], value["entity_id"]) == ("PO-7", "container", "c-1")
    (account,) = rows(own, "SELECT * FROM accounts")
    assert (account["company_name"], account["leftovers"], account["last_changed_at"]) == ("ACME Imports", None, account["_synced_at"])
    # A user was kept whole as JSON: all of it is in `leftovers` now (the reference shows no member of a user).
    (user,) = rows(own, "SELECT * FROM users")
    assert not {"attributes", "relationships", "last_event_at"} & set(user)
    assert orjson.loads(user["leftovers"]) == {
        "attributes": {"email": "kim@example.com", "name": "Kim"},
        "relationships": {"account": {"data": {"id": "a-1", "type": "account"}}},
    }
    (webhook,) = rows(own, "SELECT * FROM webhooks")
    assert (webhook["headers"], webhook["events"], webhook["deleted_at"]) == ([{"name": "Authorization"}], ["container.updated"], None)

    # A copy older than the delivery the row took never rolls it back; the same copy later is unchanged.
    older = {**REQUEST, "attributes": {**REQUEST["attributes"], "status": "pending"}}
    assert (
        write_batch(path, tracking_request_columns([older], observed_at="2026-11-01T00:00:00+00:00"), run_id="run-2")[
            "tracking_requests"
        ].stale
        == 1
    )
    later = "2026-11-03T00:00:00+00:00"
    assert write_batch(path, tracking_request_columns([REQUEST], observed_at=later), run_id="run-2")["tracking_requests"].unchanged == 1
    (request,) = rows(own, "SELECT status, observed_at, leftovers FROM tracking_requests")
    assert (request["status"], request["observed_at"].isoformat(), request["leftovers"]) == ("created", later, None)

    # What the tables did not know is kept from now on.
    counts = write_batch(
        path,
        definition_columns([{**DEFINITION, "attributes": {**DEFINITION["attributes"], "locale": "en"}}], observed_at=later),
        run_id="run-3",
    )
    assert counts["custom_field_definitions"].updated == 1
    assert orjson.loads(rows(own, "SELECT leftovers FROM custom_field_definitions")[0]["leftovers"]) == {"attributes": {"locale": "en"}}
    value_resource = {
        "id": "cf-1",
        "type": "custom_field",
        "attributes": {"api_slug": "po_number", "value": "PO-8", "display_value": "PO-8"},
        "relationships": {
            "entity": {"data": {"type": "container", "id": "c-1"}},
            "definition": {"data": {"type": "custom_field_definition", "id": "d-1"}},
        },
    }
    assert write_batch(path, custom_field_columns([value_resource], observed_at=later), run_id="run-3")["custom_fields"].updated == 1
    hook = {
        "id": "w-1",
        "type": "webhook",
        "attributes": {
            "url": "https://x",
            "active": False,
            "events": ["container.updated"],
            "secret": "never-stored",
            "headers": [{"name": "Authorization", "value": "Token never-stored"}],
        },
    }
    assert write_batch(path, webhook_columns([hook], observed_at=later), run_id="run-3")["webhooks"].updated == 1
    assert not [f for f in tmp_path.rglob("*") if f.is_file() and b"never-stored" in f.read_bytes()]

    # Counts the old tables kept as INTEGER are BIGINT, as declared: a large one fits.
    found = rows(own, "SELECT table_name || '.' || column_name AS c, data_type AS t FROM information_schema.columns")
    types = {r["c"]: r["t"] for r in found}
    assert types["tracking_requests.retry_count"] == types["custom_field_options.position"] == "BIGINT"
    big = {**REQUEST, "attributes": {**REQUEST["attributes"], "retry_count": 2**40}}
    assert write_batch(path, tracking_request_columns([big], observed_at=later), run_id="run-4")["tracking_requests"].updated == 1
    assert rows(own, "SELECT retry_count FROM tracking_requests")[0]["retry_count"] == 2**40
