"""The warehouse schema as SQLModel table classes: the one source of truth for the DDL.

Every synced table carries `_synced_at` and `_run_id` (the run that last wrote the row). Related
resources whose fields the spec does not show keep `attributes` and `relationships` as JSON.
Resources declared once in `shipsync.api` (shipments, containers, events, places, email
submissions, extractions) get their tables from `warehouse.declared_tables`, added here; the
webhook event log's tables are in `warehouse.schema_events`.
Bump SCHEMA_VERSION when tables or columns are added; `migrate` adds what an older file lacks.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Table
from sqlmodel import Field, SQLModel

from shipsync.warehouse import schema_events  # noqa: F401  (registers the event log's tables)
from shipsync.warehouse.declared_tables import create_declared_tables
from shipsync.warehouse.schema_columns import bigint, double, json_field, strings, ts

SCHEMA_VERSION = 10


class Synced(SQLModel):
    """Columns every synced row carries (named with a leading underscore in the table)."""

    synced_at: datetime | None = ts(sa_column_kwargs={"name": "_synced_at"})
    run_id: str | None = Field(default=None, sa_column_kwargs={"name": "_run_id"})


class DocumentRow(Synced, table=True):
    __tablename__ = "documents"
    id: str = Field(primary_key=True)
    name: str | None = None
    document_type: str | None = None
    document_type_manual: str | None = None
    classification_notes: str | None = None
    source: str | None = None
    file_name: str | None = None
    file_content_type: str | None = None
    file_size_bytes: int | None = bigint()
    created_at: datetime | None = ts()
    updated_at: datetime | None = ts()
    account_id: str | None = None
    user_id: str | None = None
    email_submission_id: str | None = None
    last_document_representation_id: str | None = None
    self_link: str | None = None
    download_link: str | None = None


class DocumentShipmentRow(Synced, table=True):
    __tablename__ = "document_shipments"
    document_id: str = Field(primary_key=True)
    shipment_id: str = Field(primary_key=True)


class DocumentContainerRow(Synced, table=True):
    __tablename__ = "document_containers"
    document_id: str = Field(primary_key=True)
    container_id: str = Field(primary_key=True)


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


class MetroAreaRow(Synced, table=True):
    __tablename__ = "metro_areas"
    code: str = Field(primary_key=True)
    id: str | None = None
    name: str | None = None
    state_abbr: str | None = None
    country_code: str | None = None
    time_zone: str | None = None
    latitude: float | None = double()
    longitude: float | None = double()
    unnamed_member: str | None = None


class DocumentSchemaRow(Synced, table=True):
    __tablename__ = "document_schemas"
    id: str = Field(primary_key=True)
    document_type: str | None = None
    label: str | None = None
    schema_version: str | None = None
    full_version: str | None = None
    current: bool | None = None
    draft: bool | None = None
    active_at: datetime | None = ts()
    schema_format: str | None = None
    description: str | None = None
    schema_payload: dict[str, Any] | None = json_field()
    created_at: datetime | None = ts()
    updated_at: datetime | None = ts()
    self_link: str | None = None


class TrackingRequestRow(Synced, table=True):
    __tablename__ = "tracking_requests"
    id: str = Field(primary_key=True)
    request_number: str | None = None
    status: str | None = None
    request_type: str | None = None
    scac: str | None = None
    created_at: datetime | None = ts()
    updated_at: datetime | None = ts()
    ref_numbers: list[str] | None = strings()
    tags: list[str] | None = strings()
    ref_number: str | None = None  # schema 7
    failed_reason: str | None = None
    is_retrying: bool | None = None
    retry_count: int | None = None
    tracked_object_type: str | None = None
    tracked_object_id: str | None = None
    customer_id: str | None = None
    self_link: str | None = None
    last_event_at: datetime | None = ts()
    last_event_id: str | None = None


class CustomFieldDefinitionRow(Synced, table=True):
    __tablename__ = "custom_field_definitions"
    id: str = Field(primary_key=True)
    entity_type: str | None = None
    api_slug: str | None = None
    display_name: str | None = None
    data_type: str | None = None
    description: str | None = None
    reference_type: str | None = None
    validation: dict[str, Any] | None = json_field()
    default_format: str | None = None
    default_value: Any = json_field(nullable=True)
    self_link: str | None = None


class CustomFieldOptionRow(Synced, table=True):
    __tablename__ = "custom_field_options"
    id: str = Field(primary_key=True)
    definition_id: str | None = None
    label: str | None = None
    value: str | None = None
    position: int | None = None


class CustomFieldRow(Synced, table=True):
    __tablename__ = "custom_fields"
    id: str = Field(primary_key=True)
    api_slug: str | None = None
    value: Any = json_field(nullable=True)
    display_value: str | None = None
    entity_type: str | None = None
    entity_id: str | None = None
    definition_id: str | None = None
    self_link: str | None = None


class WebhookRow(Synced, table=True):
    """Registered webhooks. Never the secret (it lives in the local secrets store only), and of
    the headers sent with deliveries only their names: a value may be a credential."""

    __tablename__ = "webhooks"
    id: str = Field(primary_key=True)
    url: str | None = None
    active: bool | None = None
    events: list[str] | None = strings()
    headers: list[dict[str, str]] | None = json_field()
    self_link: str | None = None
    deleted_at: datetime | None = ts()


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
