"""Normalizing what needs more than its declaration: a page of documents with what it includes, an
option's definition, a webhook's headers cut to their names. Every other resource is normalized by
its declaration alone (`warehouse.declared_rows.declared_tables_batch`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from shipsync.api.account_models import CustomFieldOption, Webhook
from shipsync.api.document_models import Document
from shipsync.api.jsonapi import JsonObject
from shipsync.warehouse.declared_rows import Batch, declared_batch, declared_tables_batch


def document_page_columns(documents: Sequence[JsonObject], included: Iterable[JsonObject], observed_at: str | None) -> Batch:
    """Everything one pull of documents (with `include`) writes: documents, their link tables, what they include."""
    return {**declared_tables_batch(Document, documents, observed_at=observed_at), **declared_batch(included, observed_at=observed_at)}


def option_columns(definition_id: str, resources: Sequence[JsonObject], *, observed_at: str | None) -> Batch:
    """A definition's options; `definition_id` where an option does not name its definition itself."""
    batch = declared_tables_batch(CustomFieldOption, resources, observed_at=observed_at)
    columns = batch[CustomFieldOption.table_name]
    columns["definition_id"] = [named or definition_id for named in columns.get("definition_id", [])]
    return batch


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
