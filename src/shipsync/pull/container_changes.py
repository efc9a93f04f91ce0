"""Which listed containers changed since the warehouse last saw them, so that an incremental walk
reads the transport events of those only.

The containers listing carries no transport events (the reference's schema has the linkage, not
the records), so each container's events cost one request. A container has an event the warehouse
lacks when its linkage names an event id the warehouse does not hold, or, where the listing gives
no linkage, when its milestones, times or status differ from the warehouse's row; either one
counts. A container the warehouse does not hold, or holds no transport event
of, counts as changed: its row may have come included with a shipment or a document, whose
answers carry no events. The service's
refresh and check stamps (`pod_last_tracking_request_at`, `terminal_checked_at`, ...) move on
every refresh, with or without news, so they say nothing here.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Sequence
from datetime import date, datetime
from typing import Any

import duckdb

from shipsync.api.jsonapi import JsonObject, refs_of, relationship
from shipsync.api.tracking_models import Container
from shipsync.warehouse.coerce import utc_timestamp

NOT_NEWS = frozenset(
    {
        "created_at",
        "pod_last_tracking_request_at",
        "shipment_last_tracking_request_at",
        "rail_last_tracking_request_at",
        "terminal_checked_at",
    }
)


def _time_kind(annotation: Any) -> type | None:
    """`datetime` or `date` for a declared member that holds an instant or a day, else None."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType, typing.Annotated):
        found = [kind for a in typing.get_args(annotation) if (kind := _time_kind(a)) is not None]
        return found[0] if found else None
    return annotation if annotation in (datetime, date) else None


_KINDS = {name: _time_kind(member.annotation) for name, member in Container.model_fields.items()}
# The members that say a container moved: its status and every time of its journey.
COMPARED: tuple[str, ...] = ("current_status", *(name for name, kind in _KINDS.items() if kind is not None and name not in NOT_NEWS))


def _held(value: object) -> str | None:
    """A warehouse value in the form `_listed` gives."""
    if isinstance(value, datetime):
        return utc_timestamp(value.isoformat())
    if isinstance(value, date):
        return value.isoformat()
    return None if value is None else str(value)


def _listed(container: JsonObject, name: str) -> str | None:
    """A listed member as the warehouse holds it: an instant in UTC, a day as its date."""
    value = (container.get("attributes") or {}).get(name)
    if not isinstance(value, str):
        return None if value is None else str(value)
    if _KINDS.get(name) is datetime:
        return utc_timestamp(value)
    if _KINDS.get(name) is date:
        return value[:10]
    return value


def _linked_events(container: JsonObject) -> set[str]:
    return {event_id for kind, event_id in refs_of(relationship(container, "transport_events")) if kind == "transport_event"}


def changed_containers(con: duckdb.DuckDBPyConnection, containers: Sequence[JsonObject]) -> list[str]:
    """The ids of `containers` (as listed) that name a transport event the warehouse lacks, whose
    status or journey times differ from the warehouse's rows, or whose events it holds none of."""
    ids = [str(c["id"]) for c in containers]
    columns = ", ".join(f"c.{name}" for name in COMPARED)
    sql = (
        f"SELECT c.id, {columns}, (SELECT list(e.id) FROM transport_events e WHERE e.container_id = c.id) "
        "FROM containers c WHERE c.id IN (SELECT unnest(?))"
    )
    held: dict[str, tuple[tuple[str | None, ...], set[str]]] = {
        str(row[0]): (tuple(_held(v) for v in row[1:-1]), {str(e) for e in row[-1] or ()}) for row in con.execute(sql, [ids]).fetchall()
    }
    moved = []
    for container in containers:
        found = held.get(str(container["id"]))
        if (
            found is None
            or not found[1]
            or not _linked_events(container) <= found[1]
            or found[0] != tuple(_listed(container, name) for name in COMPARED)
        ):
            moved.append(str(container["id"]))
    return moved
