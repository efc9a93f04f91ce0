"""What a webhook notification is: the one parser the receiver and the loader share.

A body is a notification when it is JSON within the limits of `body_limits` (depth, values, no
member given twice) whose `data` is an object of type `webhook_notification` with a non-empty
string `id`. The receiver answers 200 to a signed notification once it is spooled
(400 to any other signed body, kept in quarantine); the loader loads every notification it finds in
the spool. Every other member is read tolerantly, because the service may one day send any member
null, absent or of another type: a member of unexpected type reads as absent (an `event` that is an
object, `attributes` that are a list, a relationship that is a list, `included` that is a number,
a `created_at` that is not a time), never as an error, and the body is kept whole. What the loader
takes as a freshness stamp must be a time in a sane window (`stamp_problem`): one far ahead would
make its row newer than every later update.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from shipsync.api.jsonapi import linkage
from shipsync.json_text import read_strict
from shipsync.warehouse.coerce import utc_timestamp
from shipsync.webhooks.body_limits import members_of, shape_of

JsonObject = dict[str, Any]
# Freshness stamps (a notification's `created_at`, a changeset's `timestamp`) must fall in this
# window: a stamp far ahead (a year 9999, `infinity`, which DuckDB reads as a time) would be newer
# than every later update, and freeze its row for good.
EARLIEST_STAMP = datetime(1970, 1, 1, tzinfo=UTC)
STAMP_HORIZON = timedelta(days=2 * 366)


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _identifier(value: object) -> str | None:
    """Ids are strings; a number is read as its digits, anything else as absent."""
    if isinstance(value, str):
        return value
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass(slots=True)
class Notification:
    id: str
    data: JsonObject
    document: JsonObject

    @property
    def attributes(self) -> JsonObject:
        attributes = self.data.get("attributes")
        return attributes if isinstance(attributes, dict) else {}

    @property
    def event(self) -> str | None:
        return _text(self.attributes.get("event"))

    @property
    def delivery_status(self) -> str | None:
        return _text(self.attributes.get("delivery_status"))

    @property
    def created_at(self) -> str | None:
        return utc_timestamp(self.attributes.get("created_at"))

    def related(self, name: str) -> tuple[str | None, str | None]:
        """(type, id) of the to-one relationship `name`, or (None, None)."""
        data = linkage(self.data, name)
        if not isinstance(data, dict):
            return None, None
        return _text(data.get("type")), _identifier(data.get("id"))

    def included(self) -> dict[tuple[str, str], JsonObject]:
        """The included resources with a string type and an id, by (type, id); the last one of a
        (type, id) given twice wins. Anything else in `included` is not a resource and is skipped."""
        included = self.document.get("included")
        if not isinstance(included, list):
            return {}
        resources: dict[tuple[str, str], JsonObject] = {}
        for resource in included:
            if not isinstance(resource, dict) or not isinstance(type_ := resource.get("type"), str) or not type_:
                continue
            if (resource_id := _identifier(resource.get("id"))) is not None:
                resources[type_, resource_id] = resource
        return resources


def parse_notification(body: bytes) -> Notification | str:
    """The notification in `body`, or the reason it is not one (see `body_limits` for a body too
    deep, too many values, or a member given twice: never parsed, or refused once parsed)."""
    shape = shape_of(body)
    if problem := shape.problem():
        return f"body {problem}"
    try:
        document = read_strict(body)
    except ValueError:
        return "body is not JSON"
    if members_of(document) != shape.members:
        return "a member is given twice in one object (read one way here, another in the warehouse)"
    data = document.get("data") if isinstance(document, dict) else None
    if not isinstance(data, dict):
        return "no data object"
    if data.get("type") != "webhook_notification":
        return f"data.type is {str(data.get('type'))[:60]!r}, not webhook_notification"
    notification_id = data.get("id")
    if not isinstance(notification_id, str) or not notification_id:
        return "no data.id"
    return Notification(notification_id, data, document)


def stamp_problem(notification: Notification, now: datetime) -> str | None:
    """Why a notification's freshness stamps cannot be trusted, or None. `created_at` is read
    tolerantly (not a time: absent, which is older than any stamp) but a time outside the window
    is refused; a changeset's `timestamp`, which goes into the containers as given, must be a time
    inside the window (`infinity` is not one here)."""
    window = f"between {EARLIEST_STAMP:%Y} and {now + STAMP_HORIZON:%Y-%m-%d}"
    if notification.created_at is not None and not _within(notification.created_at, now):
        return f"created_at {notification.attributes.get('created_at')!r:.60} is not a time {window}"
    for resource in notification.included().values():
        attributes = resource.get("attributes")
        stamp = attributes.get("timestamp") if resource.get("type") == "container_updated_event" and isinstance(attributes, dict) else None
        if isinstance(stamp, str) and not _within(utc_timestamp(stamp), now):
            return f"changeset timestamp {stamp!r:.60} is not a time {window}"
    return None


def _within(stamp: str | None, now: datetime) -> bool:
    """A UTC ISO stamp (as `utc_timestamp` gives) inside the window; None is not."""
    return stamp is not None and EARLIEST_STAMP <= datetime.fromisoformat(stamp) <= now + STAMP_HORIZON
