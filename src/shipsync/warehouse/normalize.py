"""Normalize JSON:API resources into per-table columns, ready for `upsert`.

Input is what the service sends (resource dicts), so the same code serves pulls, the webhook event
log and benchmarks. Columns are built with one comprehension each: at 100k documents, per-row
dispatch costs more than the work.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from shipsync.api.account_models import CustomField, CustomFieldDefinition, CustomFieldOption, TrackingRequest, Webhook
from shipsync.api.document_models import Document, DocumentSchema
from shipsync.api.jsonapi import JsonObject
from shipsync.api.place_models import MetroArea
from shipsync.json_text import dumps_or_null
from shipsync.warehouse.declared_rows import declared_batch, declared_tables_batch
from shipsync.warehouse.schema import RELATED_TABLES

Columns = dict[str, list[Any]]
Batch = dict[str, Columns]  # table name -> column name -> values


def included_columns(included: Iterable[JsonObject], observed_at: str | None) -> Batch:
    """Declared types (shipments, containers, places, ...) get their typed tables, stamped with
    when they were observed; accounts their own columns; users keep attributes as JSON."""
    included = list(included)
    by_type: dict[str, dict[str, JsonObject]] = {}
    for resource in included:
        by_type.setdefault(resource.get("type", ""), {})[str(resource.get("id"))] = resource
    batch: Batch = declared_batch(included, observed_at=observed_at)
    accounts = list(by_type.get("account", {}).values())
    if accounts:
        batch["accounts"] = {
            "id": [str(a["id"]) for a in accounts],
            "company_name": [(a.get("attributes") or {}).get("company_name") for a in accounts],
        }
    for type_, table_name in RELATED_TABLES.items():
        resources = list(by_type.get(type_, {}).values())
        if resources:
            batch[table_name] = related_columns(resources)
    return batch


def related_columns(resources: Sequence[JsonObject]) -> Columns:
    return {
        "id": [str(r["id"]) for r in resources],
        "attributes": [dumps_or_null(r.get("attributes") or {}) for r in resources],
        "relationships": [dumps_or_null(r.get("relationships") or {}) for r in resources],
    }


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
    return [{"name": h["name"]} for h in headers if isinstance(h, dict) and "name" in h] if isinstance(headers, list) else []


def webhook_columns(resources: Sequence[JsonObject], *, observed_at: str | None) -> Batch:
    """Webhooks without their secret and without their headers' values: the declaration stores
    neither; the headers are cut to their names first all the same, so that a `headers` of an
    unexpected shape cannot carry a value into `leftovers`."""
    scrubbed = []
    for resource in resources:
        attributes = resource.get("attributes")
        if isinstance(attributes, dict) and attributes.get("headers") is not None:
            resource = {**resource, "attributes": {**attributes, "headers": header_names(attributes["headers"])}}
        scrubbed.append(resource)
    return declared_tables_batch(Webhook, scrubbed, observed_at=observed_at)


def merge(into: Batch, more: Batch) -> Batch:
    """Append the columns of `more` to `into` (same tables, same columns)."""
    for table_name, columns in more.items():
        target = into.setdefault(table_name, {name: [] for name in columns})
        for name, values in columns.items():
            target.setdefault(name, []).extend(values)
    return into
