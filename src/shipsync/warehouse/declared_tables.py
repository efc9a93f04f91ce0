"""The tables of declared resources, built from their declarations (one table per declaration).

Columns: the key (`id`, or the declared member that names the record), `id`, `kind` where a table
holds several types, one column per member (relationships as `<name>_id`, `<name>_type` where they
may point at several types, `<singular>_ids` for lists), derived columns, the columns the pipeline
keeps itself (`local_columns`), `self_link`, `leftovers`
(JSON: every member the declaration does not know or that came with another type than declared),
and the bookkeeping columns below. A to-many relationship declared with `link_table` gets a table
of (owner, target) rows instead of a list column.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from sqlalchemy import JSON, Column, DateTime, String, Table
from sqlalchemy.types import UserDefinedType
from sqlmodel import SQLModel

from shipsync.api.account_models import CustomField, CustomFieldDefinition, CustomFieldOption, Party, TrackingRequest, Webhook
from shipsync.api.declared import Declared
from shipsync.api.document_models import Document, DocumentSchema
from shipsync.api.place_models import MetroArea, Port, ShippingLine, Terminal, Vessel
from shipsync.api.related_models import Account, DocumentRepresentation, EmailSubmission, User
from shipsync.api.tracking_models import Container, ContainerEvent, EstimatedEvent, RawEvent, Shipment, TransportEvent
from shipsync.warehouse.identifiers import ident
from shipsync.warehouse.members import LinkTable, members_of

DECLARED: tuple[type[Declared], ...] = (
    Shipment,
    Container,
    TransportEvent,
    EstimatedEvent,
    ContainerEvent,
    RawEvent,
    Port,
    Terminal,
    Vessel,
    ShippingLine,
    EmailSubmission,
    DocumentRepresentation,
    Document,
    DocumentSchema,
    MetroArea,
    Account,
    User,
    TrackingRequest,
    CustomFieldDefinition,
    CustomFieldOption,
    CustomField,
    Webhook,
    Party,
)
# JSON:API type -> its declaration, for the types written wherever they arrive (`from_included`).
DECLARED_BY_TYPE: dict[str, type[Declared]] = {t: d for d in DECLARED if d.from_included for t in d.resource_types}
DECLARED_BY_TABLE: dict[str, type[Declared]] = {d.table_name: d for d in DECLARED}
# Link tables of to-many relationships: table -> where its rows come from.
LINK_TABLES: dict[str, LinkTable] = {m.link_table.table: m.link_table for d in DECLARED for m in members_of(d) if m.link_table}
# When the data a row holds was current at the service: the time a pull asked, or the `created_at`
# of the delivery that brought it. A row is only ever replaced by data at least as new.
FRESHNESS = "observed_at"
# Columns that say where a row came from: written with a change, never a change themselves.
STAMPS = (FRESHNESS, "last_event_id")


class SqlType(UserDefinedType[Any]):
    """A DuckDB type written as DuckDB spells it (STRUCT lists, arrays, ...)."""

    cache_ok = True

    def __init__(self, spec: str) -> None:
        self.spec = spec

    def get_col_spec(self, **kw: Any) -> str:
        return self.spec


def _timestamp(name: str) -> Column[Any]:
    return Column(name, DateTime(timezone=True))


@cache
def declared_table(declaration: type[Declared]) -> Table:
    members = members_of(declaration)
    keyed = [m for m in members if m.column == declaration.key]
    columns: list[Column[Any]] = [Column(m.column, SqlType(m.sql_type), primary_key=True) for m in keyed]
    columns.append(Column("id", String, primary_key=not keyed))
    if declaration.kind_column:
        columns.append(Column("kind", String))
    for member in members:
        if member in keyed or member.link_table:
            continue
        columns.append(Column(member.column, SqlType(member.sql_type)))
        if member.polymorphic:
            columns.append(Column(f"{member.name}_type", String))
    for name, derived in declaration.derived.items():
        columns.append(Column(name, SqlType(derived.sql_type)))
    for name, sql_type in declaration.local_columns.items():
        columns.append(Column(name, SqlType(sql_type)))
    columns += [
        Column("self_link", String),
        Column("leftovers", JSON),
        _timestamp(FRESHNESS),
        Column("last_event_id", String),
        _timestamp("first_seen_at"),
        _timestamp("last_changed_at"),
        _timestamp("_synced_at"),
        Column("_run_id", String),
    ]
    return Table(declaration.table_name, SQLModel.metadata, *columns)


def link_table(link: LinkTable) -> Table:
    return Table(
        link.table,
        SQLModel.metadata,
        Column(link.owner_column, String, primary_key=True),
        Column(link.target_column, String, primary_key=True),
        _timestamp("_synced_at"),
        Column("_run_id", String),
    )


def create_declared_tables() -> None:
    for declaration in DECLARED:
        declared_table(declaration)
    for link in LINK_TABLES.values():
        link_table(link)


def derived_columns(table_name: str) -> dict[str, str]:
    """A table's derived columns: name to the SQL expression (of the row's columns) computing it."""
    declaration = DECLARED_BY_TABLE.get(table_name)
    return {name: d.expression for name, d in declaration.derived.items()} if declaration is not None else {}


def refresh_derived_sql(table_name: str) -> str | None:
    """The UPDATE that recomputes a table's derived columns where they are out of date."""
    derived = derived_columns(table_name)
    if not derived:
        return None
    sets = ", ".join(f"{ident(name)} = {expression}" for name, expression in derived.items())
    stale = " OR ".join(f"{ident(name)} IS DISTINCT FROM ({expression})" for name, expression in derived.items())
    return f"UPDATE {ident(table_name)} SET {sets} WHERE {stale}"
