"""A tracking request's tags as the service sends them today (issue 12, item 3): answers and
deliveries carry them as `shipment_tags`; pulls, the event loader and a warehouse made by the
previous version all end with them in `tracking_requests.tags`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import orjson

from shipsync.bulk.undo import undo_run
from shipsync.pull.tracking_requests import pull_tracking_requests
from shipsync.warehouse.connection import connect
from shipsync.warehouse.layout import pipeline_file
from shipsync.warehouse.schema import SCHEMA_VERSION
from shipsync.webhooks.framing import encode_record
from shipsync.webhooks.load import load_events
from shipsync_sandbox.deliver import envelope
from shipsync_sandbox.views import tracking_request_view
from support.sandboxes import K1, RunningSandbox, settings_for

# Newer than anything the sandbox holds, and within the window events load trusts (up to two years ahead).
NEWER = (datetime.now(UTC) + timedelta(days=365)).strftime("%Y-%m-%dT%H:%M:%SZ")


def rows(warehouse: Path, sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        return con.execute(sql, params or []).fetchall()
    finally:
        con.close()


def tagged_request(sandbox: RunningSandbox) -> tuple[dict[str, Any], dict[str, Any]]:
    account = sandbox.state.world.accounts[K1]
    request = next(tr for tr in account.tracking_requests.values() if tracking_request_view(account, tr)["attributes"]["shipment_tags"])
    return request, tracking_request_view(account, request)


def test_a_pull_reads_shipment_tags(sandbox: RunningSandbox, warehouse: Path) -> None:
    request, view = tagged_request(sandbox)
    assert "tags" not in view["attributes"] and view["attributes"]["shipment_tags"] == ["seeded"]
    pull_tracking_requests(settings_for(sandbox, warehouse))
    assert rows(warehouse, "SELECT tags FROM tracking_requests WHERE id = ?", [request["id"]]) == [(["seeded"],)]


def deliver(warehouse: Path, bodies: list[dict[str, Any]]) -> None:
    spool = warehouse.parent / "spool"
    spool.mkdir(parents=True, exist_ok=True)
    (spool / "segment-1.spool").write_bytes(b"".join(encode_record(orjson.dumps(b), 0) for b in bodies))
    load_events(warehouse, spool)


def test_the_event_loader_reads_shipment_tags(sandbox: RunningSandbox, warehouse: Path) -> None:
    request, view = tagged_request(sandbox)
    view["attributes"]["updated_at"] = NEWER  # the event refreshes the row
    deliver(warehouse, [envelope("w", "tracking_request.succeeded", view, [view], NEWER)])
    assert rows(warehouse, "SELECT tags FROM tracking_requests WHERE id = ?", [request["id"]]) == [(["seeded"],)]


def test_a_warehouse_of_the_previous_version_gets_its_tags_back(sandbox: RunningSandbox, warehouse: Path) -> None:
    """Schema 6 read only `tags`: rows loaded from deliveries kept NULL. The migration to 7 adds
    `ref_number` and fills those tags from the newest delivered copy, else from the shipment."""
    request, view = tagged_request(sandbox)
    other = next(tr for tr in sandbox.state.world.accounts[K1].tracking_requests.values() if tr["id"] != request["id"])
    deliver(warehouse, [envelope("w", "tracking_request.succeeded", view, [view], NEWER)])
    pull_tracking_requests(settings_for(sandbox, warehouse))
    shipment = sandbox.state.world.accounts[K1].resource("shipment", other["relationships"]["tracked_object"]["data"]["id"])
    assert shipment is not None
    con = duckdb.connect(str(pipeline_file(warehouse)))
    # What the previous version left: no ref_number column, NULL tags, its version recorded.
    con.execute("UPDATE tracking_requests SET tags = NULL")
    con.execute("ALTER TABLE tracking_requests DROP COLUMN ref_number")
    # Shipments were kept whole as JSON then (schema 9 types them: the steps run in order).
    con.execute("DROP TABLE shipments")
    con.execute(
        "CREATE TABLE shipments (id VARCHAR, attributes JSON, relationships JSON, first_seen_at TIMESTAMPTZ, last_changed_at TIMESTAMPTZ, "
        "last_event_at TIMESTAMPTZ, last_event_id VARCHAR, _synced_at TIMESTAMPTZ, _run_id VARCHAR)"
    )
    con.execute(
        "INSERT INTO shipments (id, attributes, relationships) VALUES (?, ?, '{}')",
        [shipment["id"], orjson.dumps({"tags": ["b", "a"]}).decode()],
    )
    con.execute("DELETE FROM _shipsync_schema")
    con.execute("INSERT INTO _shipsync_schema VALUES (6, now())")
    con.close()
    with connect(warehouse):
        pass  # opening migrates
    assert rows(pipeline_file(warehouse), "SELECT max(version) FROM _shipsync_schema") == [(SCHEMA_VERSION,)]
    assert rows(warehouse, "SELECT tags FROM tracking_requests WHERE id = ?", [request["id"]]) == [(["seeded"],)]
    assert rows(warehouse, "SELECT tags FROM tracking_requests WHERE id = ?", [other["id"]]) == [(["b", "a"],)]
    assert rows(warehouse, "SELECT count(ref_number) FROM tracking_requests") == [(0,)]
    assert rows(warehouse, "SELECT tags FROM shipments WHERE id = ?", [shipment["id"]]) == [(["b", "a"],)]


def test_undo_of_a_run_made_by_the_previous_version(sandbox: RunningSandbox, warehouse: Path) -> None:
    """Before schema 7 a run patched tags (and scac...) on the tracking request itself: its undo
    takes its tags back on the shipment, and says the rest cannot be changed back."""
    request, _ = tagged_request(sandbox)
    settings = settings_for(sandbox, warehouse)
    pull_tracking_requests(settings)
    shipment = sandbox.state.world.accounts[K1].resource("shipment", request["relationships"]["tracked_object"]["data"]["id"])
    assert shipment is not None
    shipment["attributes"]["tags"] = ["seeded", "vip", "set-later"]
    con = duckdb.connect(str(pipeline_file(warehouse)))
    con.execute(
        "INSERT INTO bulk_undo (run_id, seq, kind, entity_type, entity_id, field, action, resource_id, before, after) "
        "VALUES ('old-run', 0, 'tracking-requests', 'tracking_request', ?, 'scac,tags', 'update', ?, ?, ?)",
        [request["id"], request["id"], '{"scac": "MAEU", "tags": ["seeded"]}', '{"scac": "MSCU", "tags": ["seeded", "vip"]}'],
    )
    con.close()
    report = undo_run(settings, "old-run")
    assert shipment["attributes"]["tags"] == ["seeded", "set-later"]
    assert {(c.field, c.status) for c in report.changes} == {("tags", "applied"), ("scac", "failed")}
