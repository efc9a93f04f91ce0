"""The webhook event log's tables: notifications, the resources they included, conflicting copies,
dead letters and how far the loader got in each spool segment (part of the schema in `schema`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, LargeBinary
from sqlmodel import Field, SQLModel

from shipsync.warehouse.schema_columns import json_field, ts


class WebhookEventRow(SQLModel, table=True):
    """The append-only event log: one row per webhook notification, whatever its kind."""

    __tablename__ = "webhook_events"
    notification_id: str = Field(primary_key=True)
    event: str | None = None
    delivery_status: str | None = None
    created_at: datetime | None = ts()
    webhook_id: str | None = None
    reference_type: str | None = None
    reference_id: str | None = None
    received_at: datetime | None = ts()  # NULL while the notification is known from the service's listing only
    payload: dict[str, Any] | None = json_field()
    loaded_at: datetime | None = ts()
    # SHA-256 of the body's canonical JSON: a later copy of the notification is a redelivery when
    # it matches, a conflict when it does not.
    body_sha256: str | None = None
    # When `events catch-up` took it from the service's listing (NULL: it came by delivery first).
    listed_at: datetime | None = ts()


class WebhookEventResourceRow(SQLModel, table=True):
    """Every resource a notification included, as delivered."""

    __tablename__ = "webhook_event_resources"
    notification_id: str = Field(primary_key=True)
    type: str = Field(primary_key=True)
    id: str = Field(primary_key=True)
    attributes: dict[str, Any] | None = json_field()
    relationships: dict[str, Any] | None = json_field()


class WebhookEventConflictRow(SQLModel, table=True):
    """A second, different body under a notification id already loaded: kept, not dropped."""

    __tablename__ = "webhook_event_conflicts"
    notification_id: str = Field(primary_key=True)
    received_at: datetime | None = ts(primary_key=True)
    payload: dict[str, Any] | None = json_field()
    loaded_at: datetime | None = ts()


class WebhookRedeliveryRow(SQLModel, table=True):
    """A notification delivered again with the same body (the service's retries), once: when its
    first repeat came. For delivery health; its body is the event log's, and how many copies came
    is each load's `duplicates` count."""

    __tablename__ = "webhook_redeliveries"
    notification_id: str = Field(primary_key=True)
    received_at: datetime | None = ts()
    loaded_at: datetime | None = ts()


class WebhookDeadLetterRow(SQLModel, table=True):
    """A spool record `events load` could not load, kept whole with the reason; never blocks the rest."""

    __tablename__ = "webhook_dead_letters"
    segment: str = Field(primary_key=True)
    end_offset: int = Field(primary_key=True, sa_type=BigInteger, sa_column_kwargs={"autoincrement": False})
    notification_id: str | None = None
    received_at: datetime | None = ts()
    reason: str | None = None
    body: bytes | None = Field(default=None, sa_type=LargeBinary)
    dead_lettered_at: datetime | None = ts()


class SpoolCheckpointRow(SQLModel, table=True):
    """How far `events load` got in each spool segment (committed with the rows it loaded)."""

    __tablename__ = "webhook_spool_checkpoints"
    segment: str = Field(primary_key=True)
    offset: int = Field(default=0, sa_type=BigInteger)
    archived: bool | None = None
    updated_at: datetime | None = ts()
