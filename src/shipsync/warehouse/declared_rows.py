"""Normalize resources of a declared type into its table's columns, dropping nothing.

Each member goes to its column when it has the declared type; anything else the resource carries
(members nobody declared, a member of an unexpected type, extra links, relationship metadata,
top-level members) goes to `leftovers`, a partial resource in the same JSON:API shape. So the
resource as sent is the typed columns plus the leftovers, and no value can fail a load.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from typing import Any

from shipsync.api.declared import Declared
from shipsync.api.jsonapi import JsonObject, relationships_of
from shipsync.json_text import dumps
from shipsync.warehouse.declared_tables import DECLARED_BY_TYPE, FRESHNESS
from shipsync.warehouse.members import MISFIT, Member, members_of, secret_members

Columns = dict[str, list[Any]]
Batch = dict[str, Columns]
_ENVELOPE = frozenset({"id", "type", "attributes", "relationships", "links"})


def observed_now() -> str:
    """A freshness stamp for data about to be read from the service."""
    return datetime.now(UTC).isoformat()


def _relationship(member: Member, rel: Any, left: dict[str, Any]) -> tuple[Any, str | None]:
    """(column value, pointed-at type) of a relationship; what does not fit goes to `left`."""
    if not isinstance(rel, dict):
        left[member.name] = rel
        return None, None
    # Most relationships are `{data}` alone: no copy of the rest to make.
    extra = {} if len(rel) == 1 and "data" in rel else {k: v for k, v in rel.items() if k != "data"}
    data = rel.get("data")
    value: Any
    type_: str | None
    # Tuples in isinstance, not `str | int`: that builds a union object at every evaluation (a hot path).
    if member.kind == "ref":
        ident = data.get("id") if isinstance(data, dict) else None
        if data is None:
            value, type_ = None, None
        elif isinstance(ident, (str, int)) and not isinstance(ident, bool):
            type_ = data.get("type")
            value, type_ = str(ident), type_ if isinstance(type_, str) else None
        else:
            value, type_ = None, None
            extra["data"] = data
    else:
        items = data if isinstance(data, list) else None
        ids = [str(i["id"]) for i in items or () if isinstance(i, dict) and isinstance(i.get("id"), (str, int))]
        value, type_ = (ids if items is not None and len(ids) == len(items) else None), None
        if value is None and "data" in rel:
            extra["data"] = data
    if extra:
        left[member.name] = extra
    return value, type_


@dataclass(frozen=True)
class _Plan:
    """A declaration's members grouped by where the resource sends them (made once per declaration)."""

    attributes: tuple[Member, ...]
    relationships: tuple[Member, ...]
    outside: tuple[Member, ...]  # links and top-level members
    attribute_names: frozenset[str]  # declared ones, and the secret ones (never kept anywhere)
    relationship_names: frozenset[str]


@cache
def _plan(declaration: type[Declared]) -> _Plan:
    members = members_of(declaration)
    attributes = tuple(m for m in members if m.place == "attributes")
    relationships = tuple(m for m in members if m.place == "relationships")
    outside = tuple(m for m in members if m.place in ("links", "top_level"))
    names = frozenset(m.name for m in attributes) | secret_members(declaration)
    return _Plan(attributes, relationships, outside, names, frozenset(m.name for m in relationships))


def declared_row(declaration: type[Declared], resource: JsonObject) -> dict[str, Any]:
    """One row (column -> value) of a resource; `leftovers` is canonical JSON or None."""
    plan = _plan(declaration)
    attributes = resource.get("attributes")
    attributes = attributes if isinstance(attributes, dict) else {}
    relationships = relationships_of(resource)
    links = resource.get("links")
    links = links if isinstance(links, dict) else {}
    resource_id = str(resource["id"])
    row: dict[str, Any] = {"id": resource_id}
    if declaration.kind_column:
        row["kind"] = resource.get("type")
    left_attributes: dict[str, Any] = {}
    left_relationships: dict[str, Any] = {}
    taken: set[tuple[str, str]] = set()  # (place, name) of the links and top-level members that fit
    for member in plan.outside:
        raw = (links if member.place == "links" else resource).get(member.name)
        value = None if raw is None else member.coerce(raw)
        if value is MISFIT:
            value = None
        elif raw is not None:
            taken.add((member.place, member.name))
        row[member.column] = value
    for member in plan.relationships:
        if member.name in relationships:
            value, type_ = _relationship(member, relationships[member.name], left_relationships)
        else:
            value, type_ = None, None
        row[member.column] = value
        if member.polymorphic:
            row[f"{member.name}_type"] = type_
    also_taken: set[str] = set()  # other names an attribute came under (not left over)
    for member in plan.attributes:
        raw = attributes.get(member.name)
        value = None if raw is None else member.coerce(raw)
        if value is MISFIT:
            if not member.holds_secrets:  # a misfit's raw value could carry what is never stored
                left_attributes[member.name] = raw
            value = None
        elif value is not None and not member.holds_secrets and member.carries_unknown(raw):
            left_attributes[member.name] = raw  # members a struct does not declare are kept, not dropped
        other = member.also_sent_as
        if value is None and other and attributes.get(other) is not None:
            other_value = member.coerce(attributes[other])
            if other_value is not MISFIT:
                value = other_value
                also_taken.add(other)
        row[member.column] = value
    for name, value in attributes.items():
        if name not in plan.attribute_names and name not in also_taken and not (name == "id" and str(value) == resource_id):
            left_attributes[name] = value
    for name, value in relationships.items():
        if name not in plan.relationship_names:
            left_relationships[name] = value
    self_link = links.get("self")
    row["self_link"] = self_link if isinstance(self_link, str) else None
    leftovers: dict[str, Any] = {k: v for k, v in resource.items() if k not in _ENVELOPE and ("top_level", k) not in taken}
    other_links = {k: v for k, v in links.items() if (k != "self" or not isinstance(v, str)) and ("links", k) not in taken}
    for key, part in (("attributes", left_attributes), ("relationships", left_relationships), ("links", other_links)):
        if part:
            leftovers[key] = part
    for key in ("attributes", "relationships", "links"):
        if key in resource and not isinstance(resource[key], dict | None):
            leftovers[key] = resource[key]
    row["leftovers"] = dumps(leftovers) if leftovers and declaration.keeps_leftovers else None
    return row


def declared_columns(
    declaration: type[Declared],
    resources: Sequence[JsonObject],
    *,
    observed_at: Sequence[str | None] | str | None = None,
    event_ids: Sequence[str | None] | None = None,
) -> Columns:
    """Columns of a batch of one declared type; `observed_at` per resource or one for all.
    To-many relationships kept in link tables are left out (see `declared_tables_batch`)."""
    return declared_tables_batch(declaration, resources, observed_at=observed_at, event_ids=event_ids)[declaration.table_name]


def declared_tables_batch(
    declaration: type[Declared],
    resources: Sequence[JsonObject],
    *,
    observed_at: Sequence[str | None] | str | None = None,
    event_ids: Sequence[str | None] | None = None,
) -> Batch:
    """The declared type's table and its link tables, for a batch of its resources (a resource
    without the member that keys its table is not kept: it could never be found again)."""
    rows = [declared_row(declaration, r) for r in resources]
    if declaration.key != "id" and any(row[declaration.key] is None for row in rows):
        keyed = [n for n, row in enumerate(rows) if row[declaration.key] is not None]
        rows = [rows[n] for n in keyed]
        observed_at = observed_at if observed_at is None or isinstance(observed_at, str) else [observed_at[n] for n in keyed]
        event_ids = [event_ids[n] for n in keyed] if event_ids is not None else None
    names = list(rows[0]) if rows else ["id"]
    columns: Columns = {name: [row[name] for row in rows] for name in names}
    stamps = [observed_at] * len(rows) if observed_at is None or isinstance(observed_at, str) else list(observed_at)
    columns[FRESHNESS] = stamps
    columns["last_event_id"] = list(event_ids) if event_ids is not None else [None] * len(rows)
    batch: Batch = {declaration.table_name: columns}
    for member in members_of(declaration):
        if member.link_table is not None:
            targets = columns.pop(member.column, [None] * len(rows))
            owners = [row["id"] for row in rows]
            pairs = [(owner, target) for owner, found in zip(owners, targets, strict=True) for target in found or ()]
            link = member.link_table
            batch[link.table] = {link.owner_column: [p[0] for p in pairs], link.target_column: [p[1] for p in pairs]}
    return batch


def declared_batch(
    resources: Iterable[JsonObject],
    *,
    observed_at: str | None,
    event_id: str | None = None,
) -> Batch:
    """Every resource of a declared type, grouped into its table (the last copy of an id wins)."""
    by_table: dict[type[Declared], dict[str, JsonObject]] = {}
    for resource in resources:
        if not isinstance(resource, dict) or resource.get("id") is None:
            continue
        declaration = DECLARED_BY_TYPE.get(str(resource.get("type")))
        if declaration is not None:
            by_table.setdefault(declaration, {})[str(resource["id"])] = resource
    return {
        declaration.table_name: declared_columns(
            declaration, list(found.values()), observed_at=observed_at, event_ids=[event_id] * len(found) if event_id else None
        )
        for declaration, found in by_table.items()
    }
