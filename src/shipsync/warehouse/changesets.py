"""`container.updated` changesets applied to `containers`: each changed member that the container
declaration knows is set to its new value, only where the change is at least as new as the row
(the freshness rule of every typed table), oldest change first. A changeset about a container the
warehouse does not hold yet changes nothing (the event log keeps it)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import Any

import duckdb
import pyarrow as pa

from shipsync.api.jsonapi import linkage
from shipsync.api.tracking_models import Container
from shipsync.warehouse.coerce import refused_values
from shipsync.warehouse.declared_tables import FRESHNESS, refresh_derived_sql
from shipsync.warehouse.identifiers import ident
from shipsync.warehouse.members import MISFIT, Member, members_of
from shipsync.warehouse.upsert import affected, staged


@dataclass(frozen=True)
class Changeset:
    container_id: str
    at: str  # ISO 8601: the change's timestamp, else the notification's created_at
    changes: dict[str, Any]  # member -> [old, new], as sent
    notification_id: str


def changesets_of(notification_id: str, created_at: str | None, document: dict[str, Any]) -> list[Changeset]:
    """The changesets a delivery carries (its `container_updated_event` resources)."""
    found = []
    for resource in document.get("included") or []:
        if not isinstance(resource, dict) or resource.get("type") != "container_updated_event":
            continue
        attributes = resource.get("attributes")
        attributes = attributes if isinstance(attributes, dict) else {}
        container = linkage(resource, "container")
        changes = attributes.get("changeset")
        at = attributes.get("timestamp") if isinstance(attributes.get("timestamp"), str) else created_at
        if isinstance(container, dict) and container.get("id") is not None and isinstance(changes, dict) and at:
            found.append(Changeset(str(container["id"]), at, changes, notification_id))
    return found


def _assignments(change: Changeset) -> tuple[list[str], list[Any]]:
    """The SET clauses (and their values) that apply one changeset to its container: each changed
    member the declaration knows, cast to its column's type; a value of the wrong shape is skipped."""
    members = _members()
    sets, values = [], []
    for name, pair in change.changes.items():
        member = members.get(name)
        if member is None or not isinstance(pair, list) or len(pair) != 2:
            continue
        value = None if pair[1] is None else member.coerce(pair[1])
        if value is MISFIT:
            continue
        struct = member.sql_type.startswith("STRUCT")
        cast = f"CAST(CAST(? AS JSON) AS {member.sql_type})" if struct else f"CAST(? AS {member.sql_type})"
        sets.append(f"{ident(member.column)} = {cast}")
        values.append(value)
    return sets, values


@cache
def _members() -> dict[str, Member]:
    return {m.name: m for m in members_of(Container) if m.kind not in ("ref", "refs")}


def check_changesets(con: duckdb.DuckDBPyConnection, changesets: Iterable[Changeset]) -> None:
    """Cast every value the changesets would set (and their times), raising `ValueRefusedError` where
    the data refuses: run while a load stages its batch, so that a changeset the commit could not
    apply makes its record a dead letter instead."""
    for change in changesets:
        sets, values = _assignments(change)
        casts = [clause.split(" = ", 1)[1] for clause in sets]
        with refused_values():
            con.execute(f"SELECT CAST(? AS TIMESTAMPTZ){''.join(', ' + c for c in casts)}", [change.at, *values]).fetchall()


def apply_changesets(con: duckdb.DuckDBPyConnection, changesets: Iterable[Changeset], synced_at: datetime) -> int:
    """Apply each change where it is not older than the row; returns how many rows changed."""
    changed = 0
    for change in _not_older_than_their_rows(con, changesets):
        sets, values = _assignments(change)
        if not sets:
            continue
        changed += affected(
            con,
            f"UPDATE containers SET {', '.join(sets)}, {FRESHNESS} = CAST(? AS TIMESTAMPTZ), last_event_id = ?, "
            f"_synced_at = ?, last_changed_at = ? WHERE id = ? AND ({FRESHNESS} IS NULL OR {FRESHNESS} <= CAST(? AS TIMESTAMPTZ))",
            [*values, change.at, change.notification_id, synced_at, synced_at, change.container_id, change.at],
        )
    if changed:
        refresh = refresh_derived_sql("containers")
        if refresh:
            con.execute(refresh)
    return changed


def _not_older_than_their_rows(con: duckdb.DuckDBPyConnection, changesets: Iterable[Changeset]) -> list[Changeset]:
    """The changesets, oldest first, less those that cannot change a row: about a container the
    warehouse does not hold, or older than the row already. One query for the batch instead of an
    UPDATE each (a year's load carries hundreds of thousands); each UPDATE still checks the row,
    as an earlier change of the batch may have made it newer."""
    ordered = sorted(changesets, key=lambda c: (c.at, c.notification_id))
    if not ordered:
        return []
    batch = pa.table({"container_id": [c.container_id for c in ordered], "at": [c.at for c in ordered]})
    with staged(con, "_changesets", batch):
        # A timestamp that does not parse is kept: its UPDATE fails on it, as without this filter.
        rows = con.execute(
            f"SELECT DISTINCT c.container_id, c.at FROM _changesets c JOIN containers r ON r.id = c.container_id "
            f"WHERE r.{FRESHNESS} IS NULL OR TRY_CAST(c.at AS TIMESTAMPTZ) IS NULL OR r.{FRESHNESS} <= TRY_CAST(c.at AS TIMESTAMPTZ)"
        ).fetchall()
    kept = set(rows)
    return [c for c in ordered if (c.container_id, c.at) in kept]
