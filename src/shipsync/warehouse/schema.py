"""The warehouse schema: the one source of truth for the DDL.

Every resource shipsync stores is declared once in `shipsync.api` (documents and their link tables,
document schemas, shipments, containers, events, places, metro areas, accounts, users, email
submissions, extractions, and the account's tracking requests, custom field definitions, options
and values, and webhooks): its table comes from `warehouse.declared_tables`, added here, and every
such row carries `_synced_at` and `_run_id` (the run that last wrote it). The tables shipsync keeps
for itself (the run ledger, bulk results and undo, the schema version) are SQLModel classes below;
the webhook event log's tables are in `warehouse.schema_events`.
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

SCHEMA_VERSION = 11


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


create_declared_tables()
