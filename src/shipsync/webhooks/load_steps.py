"""Parsing copies of notifications for the event log: each copy as the rows it brings (the
notification, its included resources, the resources that refresh a typed table), or as a dead letter
with the reason it is not a notification. A copy is a spool record (`events load`) or a notification
taken from the service's listing (`events catch-up`): one parser for both. `event_log` stages and
merges what this gives.

Parsing refuses, as dead letters, what the receiver refuses (a body too deep, with too many values
or a member given twice: `body_limits`) and stamps outside a sane window (`stamp_problem`), so
that every step after it can write what it reads. It keeps what the later steps need and lets the
parsed document go, so a batch holds its bodies and their rows, never every parsed body at once (a
body of `{}`s parses into many times its size in Python objects).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from shipsync.json_text import dumps
from shipsync.warehouse.declared_tables import DECLARED_BY_TYPE
from shipsync.webhooks.notification import JsonObject, parse_notification, stamp_problem

# Included resources that refresh a table: tracking requests, every declared type (shipments,
# containers, events, places), and the changesets of `container.updated`.
ENTITY_TYPES = frozenset({"tracking_request", "container_updated_event", *DECLARED_BY_TYPE})
REASON_CHARACTERS = 500


class Copy(Protocol):
    """One copy of a notification and where it came from: a spool record (`framing.SpoolRecord`:
    its segment, where it ends in it, when the receiver stored it) or a listed copy (`catch_up`:
    the catch-up run, its place in the listing, never received)."""

    @property
    def segment(self) -> str: ...
    @property
    def end_offset(self) -> int: ...
    @property
    def received_at(self) -> str | None: ...
    @property
    def body(self) -> bytes: ...


@dataclass(slots=True)
class Parsed:
    """A copy of a notification as its rows: the event, its included resources, and the resources
    that may refresh an entity table."""

    record: Copy
    notification_id: str
    event: str | None
    delivery_status: str | None
    created_at: str | None  # UTC ISO, or None when absent or not a time
    webhook_id: str | None
    reference_type: str | None
    reference_id: str | None
    resources: list[tuple[str, str, str | None, str | None]] = field(default_factory=list)  # type, id, attributes, relationships
    entities: list[tuple[str, str, JsonObject]] = field(default_factory=list)  # type, id, resource


@dataclass(frozen=True, slots=True)
class DeadLetter:
    record: Copy
    reason: str
    notification_id: str | None = None


def parse_records(records: Sequence[Copy], now: datetime) -> tuple[list[Parsed], list[DeadLetter]]:
    """Each copy as its rows, or as a dead letter with the reason it is not a notification (the
    receiver's reasons: `parse_notification`) or cannot be trusted (`stamp_problem`)."""
    parsed: list[Parsed] = []
    dead: list[DeadLetter] = []
    for record in records:
        notification = parse_notification(record.body)
        if isinstance(notification, str):
            dead.append(DeadLetter(record, notification))
            continue
        if problem := stamp_problem(notification, now):
            dead.append(DeadLetter(record, problem, notification.id))
            continue
        webhook = notification.related("webhook")
        reference_type, reference_id = notification.related("reference_object")
        row = Parsed(
            record,
            notification.id,
            notification.event,
            notification.delivery_status,
            notification.created_at,
            webhook[1],
            reference_type,
            reference_id,
        )
        for (type_, id_), resource in notification.included().items():
            row.resources.append((type_, id_, dumps(resource.get("attributes") or {}), dumps(resource.get("relationships") or {})))
            if type_ in ENTITY_TYPES:
                row.entities.append((type_, id_, resource))
        parsed.append(row)
    return parsed, dead
