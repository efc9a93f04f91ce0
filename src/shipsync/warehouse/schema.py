"""The warehouse schema as SQLModel table classes: the one source of truth for the DDL.

Every synced table carries `_synced_at` and `_run_id` (the run that last wrote the row). Related
resources whose fields the spec does not show keep `attributes` and `relationships` as JSON.
Resources declared once in `shipsync.api` (documents and their link tables, document schemas, shipments,
containers, events, places, metro areas, email submissions, extractions, and the account's tracking
requests, custom field definitions, options and values, and webhooks) get their tables from
`warehouse.declared_tables`, added here; the webhook event log's tables are in `warehouse.schema_events`.
Bump SCHEMA_VERSION when tables or columns are added; `migrate` adds what an older file lacks.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Table
from sqlmodel import Field, SQLModel

from shipsync.warehouse import schema_events  # noqa: F401  (registers the event log's tables)
from shipsync.warehouse.declared_tables import create_declared_tables
from shipsync.warehouse.schema_columns import json_field, strings, ts

SCHEMA_VERSION = 10


class Synced(SQLModel):
    """Columns every synced row carries (named with a leading underscore in the table)."""

    synced_at: datetime | None = ts(sa_column_kwargs={"name": "_synced_at"})
    run_id: str | None = Field(default=None, sa_column_kwargs={"name": "_run_id"})


class AccountRow(Synced, table=True):
    __tablename__ = "accounts"
    id: str = Field(primary_key=True)
    company_name: str | None = None


class RelatedRow(Synced):
    """A related resource whose fields the spec does not show: kept whole as JSON."""

    id: str = Field(primary_key=True)
    attributes: dict[str, Any] | None = json_field()
    relationships: dict[str, Any] | None = json_field()
    first_seen_at: datetime | None = ts()
    last_changed_at: datetime | None = ts()
    # The newest webhook event that refreshed this row: older deliveries never roll it back.
    last_event_at: datetime | None = ts()
    last_event_id: str | None = None


class UserRow(RelatedRow, table=True):
    __tablename__ = "users"


class SyncRunRow(SQLModel, table=True):
    """The run ledger: one row per flow run."""

    __tablename__ = "sync_runs"
    run_id: str = Field(primary_key=True)
    flow: str
    prefect_flow_run_id: str | None = None
    parameters: dict[str, Any] | None = json_field()
    started_at: datetime | None = ts()
    finished_at: datetime | None = ts()
    status: str | None = None
    requests: int | None = None
    throttled: int | None = None
    retries: int | None = None
    table_counts: dict[str, Any] | None = json_field()
    not_found: list[str] | None = strings()
    errors: list[str] | None = strings()


class BulkResultRow(SQLModel, table=True):
    """One line per field written (or refused) by a bulk apply or undo, in dry runs too."""

    __tablename__ = "bulk_results"
    run_id: str = Field(primary_key=True)
    seq: int = Field(primary_key=True, sa_column_kwargs={"autoincrement": False})
    file: str | None = None
    sheet: str | None = None
    row_number: int | None = None
    kind: str | None = None
    entity_type: str | None = None
    entity_id: str | None = None
    field: str | None = None
    action: str | None = None
    status: str | None = None
    detail: str | None = None
    recorded_at: datetime | None = ts()


class BulkUndoRow(SQLModel, table=True):
    """Before-images of applied writes: what `shipsync apply undo RUN_ID` restores."""

    __tablename__ = "bulk_undo"
    run_id: str = Field(primary_key=True)
    seq: int = Field(primary_key=True, sa_column_kwargs={"autoincrement": False})
    kind: str | None = None
    entity_type: str | None = None
    entity_id: str | None = None
    field: str | None = None
    action: str | None = None
    resource_id: str | None = None
    before: Any = json_field(nullable=True)
    after: Any = json_field(nullable=True)
    undone_by: str | None = None


class SchemaVersionRow(SQLModel, table=True):
    __tablename__ = "_shipsync_schema"
    version: int = Field(primary_key=True, sa_column_kwargs={"autoincrement": False})
    applied_at: datetime | None = ts()


def tables() -> list[Table]:
    """Every table of the schema, in creation order."""
    return list(SQLModel.metadata.sorted_tables)


def table(name: str) -> Table:
    return SQLModel.metadata.tables[name]


RELATED_TABLES = {"user": "users"}

create_declared_tables()
