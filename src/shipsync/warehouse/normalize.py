"""Normalize JSON:API resources into per-table columns, ready for `upsert`.

Input is what the service sends (resource dicts), so the same code serves pulls, the webhook event
log and benchmarks. Every table is a declaration's (`warehouse.declared_rows` builds its columns):
these functions name what each read writes, and add what the resource itself does not say (an
option's definition, a webhook's headers cut to their names).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from shipsync.api.account_models import CustomField, CustomFieldDefinition, CustomFieldOption, TrackingRequest, Webhook
from shipsync.api.document_models import Document, DocumentSchema
from shipsync.api.jsonapi import JsonObject
from shipsync.api.place_models import MetroArea
from shipsync.warehouse.declared_rows import declared_batch, declared_tables_batch

Columns = dict[str, list[Any]]
Batch = dict[str, Columns]  # table name -> column name -> values


def included_columns(included: Iterable[JsonObject], observed_at: str | None) -> Batch:
    """What a page includes (shipments, containers, accounts, users, ...), into their typed tables,
    stamped with when they were observed."""
    return declared_batch(included, observed_at=observed_at)


def document_page_columns(documents: Sequence[JsonObject], included: Iterable[JsonObject], observed_at: str | None) -> Batch:
    """Everything one pull of documents (with `include`) writes: documents, their link tables, what they include."""
    return {**declared_tables_batch(Document, documents, observed_at=observed_at), **included_columns(included, observed_at)}


def metro_area_columns(resources: Sequence[JsonObject], observed_at: str | None) -> Batch:
    return declared_tables_batch(MetroArea, resources, observed_at=observed_at)


def document_schema_columns(resources: Sequence[JsonObject], observed_at: str | None) -> Batch:
    return declared_tables_batch(DocumentSchema, resources, observed_at=observed_at)


def tracking_request_columns(resources: Sequence[JsonObject], *, observed_at: str | None) -> Batch:
    return declared_tables_batch(TrackingRequest, resources, observed_at=observed_at)


def definition_columns(resources: Sequence[JsonObject], *, observed_at: str | None) -> Batch:
    return declared_tables_batch(CustomFieldDefinition, resources, observed_at=observed_at)


def option_columns(definition_id: str, resources: Sequence[JsonObject], *, observed_at: str | None) -> Batch:
    """A definition's options; `definition_id` where an option does not name its definition itself."""
    batch = declared_tables_batch(CustomFieldOption, resources, observed_at=observed_at)
    columns = batch[CustomFieldOption.table_name]
    columns["definition_id"] = [named or definition_id for named in columns.get("definition_id", [])]
    return batch


def custom_field_columns(resources: Sequence[JsonObject], *, observed_at: str | None) -> Batch:
    return declared_tables_batch(CustomField, resources, observed_at=observed_at)


def header_names(headers: Any) -> list[dict[str, Any]]:
    """The names of the headers a webhook sends, never their values (a value may be a credential)."""
    if not isinstance(headers, list):
        return []
    return [{"name": h["name"]} for h in headers if isinstance(h, dict) and isinstance(h.get("name"), str)]


def webhook_columns(resources: Sequence[JsonObject], *, observed_at: str | None) -> Batch:
    """Webhooks: their declaration keeps no secret and nothing in `leftovers`; the headers are cut
    to their names first, so that the well-formed names of a list with odd entries are kept."""
    cut = []
    for resource in resources:
        attributes = resource.get("attributes")
        if isinstance(attributes, dict) and attributes.get("headers") is not None:
            resource = {**resource, "attributes": {**attributes, "headers": header_names(attributes["headers"])}}
        cut.append(resource)
    return declared_tables_batch(Webhook, cut, observed_at=observed_at)


def merge(into: Batch, more: Batch) -> Batch:
    """Append the columns of `more` to `into` (same tables, same columns)."""
    for table_name, columns in more.items():
        target = into.setdefault(table_name, {name: [] for name in columns})
        for name, values in columns.items():
            target.setdefault(name, []).extend(values)
    return into
