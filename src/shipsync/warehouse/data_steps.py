"""Data-moving steps of migrations: each one self-contained, run once inside the migration's
transaction when a file made by an older shipsync is opened (see `migrate.DATA_STEPS`)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import duckdb
import orjson

from shipsync.api.declared import Declared
from shipsync.api.related_models import DocumentRepresentation, EmailSubmission, User
from shipsync.api.tracking_models import Container, Shipment
from shipsync.json_text import dumps, loads
from shipsync.warehouse.changes import ensure_log
from shipsync.warehouse.declared_rows import declared_columns
from shipsync.warehouse.declared_tables import DECLARED_BY_TYPE, refresh_derived_sql
from shipsync.warehouse.normalize import header_names
from shipsync.warehouse.upsert import sql_types, stage, to_arrow, upsert


def tracking_request_tags_from_shipments(con: duckdb.DuckDBPyConnection) -> None:
    """Before schema 7, a tracking request's tags were read only from `tags`; deliveries and newer
    answers send them as `shipment_tags`, so those rows hold NULL. Fill them from the newest
    delivered copy of the request, else from the tracked shipment as stored."""
    con.execute(
        """
        UPDATE tracking_requests t SET tags = s.tags
        FROM (
            SELECT r.id, arg_max(from_json(r.attributes->'shipment_tags', '["VARCHAR"]'), e.created_at) AS tags
            FROM webhook_event_resources r
            JOIN webhook_events e ON e.notification_id = r.notification_id
            WHERE r.type = 'tracking_request' AND json_type(r.attributes->'shipment_tags') = 'ARRAY'
            GROUP BY r.id
        ) s
        WHERE t.id = s.id AND t.tags IS NULL
        """
    )
    if "attributes" not in _columns_of(con, "shipments"):
        return  # a file older than the JSON shipments: they arrive typed, with nothing to fill from
    con.execute(
        """
        UPDATE tracking_requests t SET tags = from_json(s.attributes->'tags', '["VARCHAR"]')
        FROM shipments s
        WHERE t.tags IS NULL AND t.tracked_object_id = s.id AND json_type(s.attributes->'tags') = 'ARRAY'
        """
    )


def typed_resources(con: duckdb.DuckDBPyConnection) -> None:
    """Schema 9: shipments, containers, email submissions and extractions were kept whole as
    `attributes`/`relationships` JSON. Each row is read back as the resource it was and normalized
    by its declaration into the typed columns (members nobody declared go to `leftovers`, so nothing
    is lost); `last_event_at` becomes the freshness stamp `observed_at`; the JSON columns go. Then the
    event log's transport and estimated events and places fill their new tables."""
    ensure_log(con)  # the upserts log what they write (opening after a migration republishes everything anyway)
    for declaration in (Shipment, Container, EmailSubmission, DocumentRepresentation, User):
        _type_rows(con, declaration)
    _replay_event_log(con)


def _columns_of(con: duckdb.DuckDBPyConnection, table: str) -> set[str]:
    rows = con.execute("SELECT column_name FROM information_schema.columns WHERE table_name = ?", [table]).fetchall()
    return {r[0] for r in rows}


def _type_rows(con: duckdb.DuckDBPyConnection, declaration: type[Declared]) -> None:
    table = declaration.table_name
    present = _columns_of(con, table)
    if "attributes" not in present:
        return
    stamp = "coalesce(last_event_at, _synced_at)" if "last_event_at" in present else "_synced_at"
    rows = con.execute(f"SELECT id, attributes, relationships, strftime({stamp}, '%Y-%m-%dT%H:%M:%S.%f%z') FROM {table}").fetchall()
    resources = [
        {"id": id_, "type": declaration.resource_types[0], "attributes": loads(attrs), "relationships": loads(rels)}
        for id_, attrs, rels, _ in rows
    ]
    if resources:
        columns = declared_columns(declaration, resources, observed_at=[r[3] for r in rows], event_ids=None)
        del columns["last_event_id"]  # kept as it is in the row
        batch = to_arrow(table, columns, sql_types(table))
        staged = [c for c in stage(con, table, batch) if c != "id"]
        sets = ", ".join(f'"{c}" = s."{c}"' for c in staged)
        con.execute(f'UPDATE "{table}" AS t SET {sets} FROM _stage s WHERE t.id = s.id')
        con.execute("DROP TABLE IF EXISTS _stage")
        refresh = refresh_derived_sql(table)
        if refresh:
            con.execute(refresh)
    for column in ("attributes", "relationships", "last_event_at"):
        if column in present:
            con.execute(f'ALTER TABLE "{table}" DROP COLUMN "{column}"')


def _replay_event_log(con: duckdb.DuckDBPyConnection) -> None:
    """The newest delivered copy of each transport event, estimated event and place."""
    # Not the types whose rows were there already (typed above, or typed tracking requests).
    kept = ("shipment", "container", "email_submission", "document_representation", "tracking_request", "user", "account")
    replayed = [t for t in DECLARED_BY_TYPE if t not in kept]
    rows = con.execute(
        "SELECT r.type, r.id, r.attributes, r.relationships, strftime(e.created_at, '%Y-%m-%dT%H:%M:%S.%f%z'), e.notification_id "
        "FROM webhook_event_resources r JOIN webhook_events e ON e.notification_id = r.notification_id "
        "WHERE r.type IN (SELECT unnest(?)) "
        "QUALIFY row_number() OVER (PARTITION BY r.type, r.id ORDER BY e.created_at DESC, e.notification_id DESC) = 1",
        [replayed],
    ).fetchall()
    by_declaration: dict[type[Declared], list[tuple[Any, ...]]] = {}
    for row in rows:
        by_declaration.setdefault(DECLARED_BY_TYPE[row[0]], []).append(row)
    now = datetime.now(UTC)
    for declaration, found in by_declaration.items():
        resources = [{"id": r[1], "type": r[0], "attributes": loads(r[2]), "relationships": loads(r[3])} for r in found]
        columns = declared_columns(declaration, resources, observed_at=[r[4] for r in found], event_ids=[r[5] for r in found])
        table = declaration.table_name
        upsert(con, table, to_arrow(table, columns, sql_types(table)), run_id="migration-9", synced_at=now)


def changed_when_synced(con: duckdb.DuckDBPyConnection) -> None:
    """Schema 10: accounts, users, documents, metro areas, document schemas and the account's
    records (tracking requests, custom field definitions, options and values, webhooks) became
    declared tables, with the bookkeeping of the others. What a row held stays as it was (the new
    `leftovers` is NULL: older versions did not keep unknown members), except users, kept whole as
    JSON, whose members all go to `leftovers` (stamped like the typed rows of schema 9);
    `last_changed_at` is `_synced_at`, which named the last change already; a tracking request's
    `last_event_at` (the delivery it last took) becomes its `observed_at`; a webhook's `headers`
    (JSON of names) become a list of structs; INTEGER counts become BIGINT, as declared. Other
    `first_seen_at` and `observed_at` stay NULL: no older version recorded them."""
    _type_rows(con, User)  # kept whole as JSON at schema 9: its members go to `leftovers` (a no-op after step 9)
    for table in DECLARED_SINCE_10:
        _widen_integers(con, table)
        con.execute(f'UPDATE "{table}" SET last_changed_at = _synced_at WHERE last_changed_at IS NULL')
    if "last_event_at" in _columns_of(con, "tracking_requests"):
        con.execute("UPDATE tracking_requests SET observed_at = last_event_at WHERE observed_at IS NULL")
        con.execute("ALTER TABLE tracking_requests DROP COLUMN last_event_at")
    headers = con.execute(
        "SELECT data_type FROM information_schema.columns WHERE table_name = 'webhooks' AND column_name = 'headers'"
    ).fetchone()
    if headers is not None and headers[0] == "JSON":
        con.execute(
            'ALTER TABLE webhooks ALTER COLUMN headers TYPE STRUCT("name" VARCHAR)[] USING from_json(headers, \'[{"name": "VARCHAR"}]\')'
        )


def _widen_integers(con: duckdb.DuckDBPyConnection, table: str) -> None:
    """Older tables kept some counts as INTEGER where the declarations say BIGINT (a tracking
    request's `retry_count`, an option's `position`): widened, so that a value past 2**31 fits."""
    declared = sql_types(table)
    found = con.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = ? AND data_type = 'INTEGER'", [table]
    ).fetchall()
    for (column,) in found:
        if declared.get(column) == "BIGINT":
            con.execute(f'ALTER TABLE "{table}" ALTER COLUMN "{column}" TYPE BIGINT')


DECLARED_SINCE_10 = (
    "accounts",
    "users",
    "documents",
    "metro_areas",
    "document_schemas",
    "tracking_requests",
    "custom_field_definitions",
    "custom_field_options",
    "custom_fields",
    "webhooks",
)


def drop_webhook_header_values(con: duckdb.DuckDBPyConnection) -> None:
    """From schema 8, registered webhooks keep their headers' names only: a header's value may be
    a credential, and the warehouse is shared with analysts."""
    for webhook_id, headers in con.execute("SELECT id, headers FROM webhooks WHERE headers IS NOT NULL").fetchall():
        try:
            listed = orjson.loads(headers)
        except orjson.JSONDecodeError:
            listed = None
        con.execute("UPDATE webhooks SET headers = CAST(? AS JSON) WHERE id = ?", [dumps(header_names(listed)), webhook_id])


def email_senders_as_lists(con: duckdb.DuckDBPyConnection) -> None:
    """Schema 11: an email submission's `from` is a list of addresses, like `to` (api-facts); older
    files typed it as one text, always empty, since the service sends a list."""
    found = con.execute(
        "SELECT data_type FROM information_schema.columns WHERE table_name = 'email_submissions' AND column_name = 'from'"
    ).fetchone()
    if found is not None and found[0] == "VARCHAR":
        con.execute(
            'ALTER TABLE email_submissions ALTER COLUMN "from" TYPE VARCHAR[] USING CASE WHEN "from" IS NULL THEN NULL ELSE ["from"] END'
        )
