"""The sandbox's state: service-wide reference data and, per API key, an isolated account.

Everything is generated deterministically from the seed and the world's start (see `seed.py` and
`timeline.py`), so two sandboxes with the same options serve the same data. Resources are stored
as JSON:API resource dicts; those whose members are computed from others (a tracking request shows
its shipment's tags) are rendered by `views.py` when served.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from shipsync_sandbox.custom_field_index import CustomFieldStore
from shipsync_sandbox.event_kinds import EVENT_KINDS
from shipsync_sandbox.notification_log import NotificationLog
from shipsync_sandbox.resources import Resource

if TYPE_CHECKING:
    from shipsync_sandbox.journey_model import ShipmentPlan
    from shipsync_sandbox.places import Places


@dataclass(frozen=True)
class Staged:
    """What a new tracking request carries until its shipment exists (api-facts: `ref_numbers`,
    `shipment_tags` and `initial_custom_fields` are applied once the request succeeds)."""

    ref_numbers: tuple[str, ...]
    shipment_tags: tuple[str, ...]
    shipment_fields: tuple[tuple[str, Any], ...]  # (api_slug, value)
    container_fields: tuple[tuple[str, Any, str], ...]  # (api_slug, value, container number or "" for all)
    auto_detect: bool


@dataclass
class Account:
    """One API key's data; other accounts never see it."""

    id: str
    company_name: str
    # The account's "now": nothing it serves or sends happened after it (`/_admin/advance` moves it on).
    clock: datetime
    # The earliest seeded departure: seeded records are placed from here (`timeline.py`).
    epoch: datetime
    # The user whose API key the account is called with: who makes its requests and stops tracking.
    key_user_id: str | None = None
    documents: Mapping[str, Resource] = field(default_factory=dict)  # a DocumentStore once seeded
    related: dict[tuple[str, str], Resource] = field(default_factory=dict)
    tracking_requests: dict[str, Resource] = field(default_factory=dict)
    definitions: dict[str, Resource] = field(default_factory=dict)
    options: dict[str, list[Resource]] = field(default_factory=dict)
    custom_fields: CustomFieldStore = field(default_factory=CustomFieldStore)
    webhooks: dict[str, Resource] = field(default_factory=dict)
    # The customers tracking requests name (`relationships.customer`), in the order they were made.
    parties: dict[str, Resource] = field(default_factory=dict)
    # Every notification sent to the account's webhooks, and how its delivery went.
    notifications: NotificationLog = field(default_factory=NotificationLog)
    # Per webhook: notifications in a row whose delivery gave up (one delivered, or turning the
    # webhook on again, starts the count again).
    failures_in_a_row: dict[str, int] = field(default_factory=dict)
    # What each tracking request made through the API brings its shipment once it succeeds.
    staged: dict[str, Staged] = field(default_factory=dict)
    # Shipments whose tracking a user stopped (`PATCH /shipments/{id}/stop_tracking`): when.
    stopped: dict[str, datetime] = field(default_factory=dict)
    # The webhook event kinds this account may subscribe to (its plan); all 43 by default.
    event_kinds: tuple[str, ...] = EVENT_KINDS
    # What the account's requests did, for its own `/_admin/stats`.
    status_counts: dict[int, int] = field(default_factory=dict)
    # Each shipment's planned journey, by shipment id; a container's shipment, by container id.
    plans: Mapping[str, ShipmentPlan] = field(default_factory=dict)  # a PlanBook once seeded
    shipment_of: dict[str, str] = field(default_factory=dict)
    # When the service last refreshed each container that `/_admin/advance` moved on (never after
    # the clock); every other container is known as of `known_from`.
    refreshed: dict[str, datetime] = field(default_factory=dict)
    # The instant containers are known at until refreshed on their own: the world's start (None:
    # the clock), so that moving the clock changes only the containers refreshed since.
    known_from: datetime | None = None
    by_type: dict[str, dict[str, Resource]] = field(default_factory=dict)

    def resource(self, type_: str, id_: str) -> Resource | None:
        return self.related.get((type_, id_))

    def add_related(self, resource: Resource) -> None:
        self.related[(resource["type"], resource["id"])] = resource
        self.by_type.setdefault(resource["type"], {})[resource["id"]] = resource

    def of_type(self, type_: str) -> list[Resource]:
        """Stored resources of one type, in id order."""
        return [r for _, r in sorted(self.by_type.get(type_, {}).items())]

    def as_of(self, container_id: str) -> datetime:
        """The instant a container is served at: when it was last refreshed."""
        return self.refreshed.get(container_id) or self.known_from or self.clock

    def shipment_as_of(self, shipment_id: str) -> datetime:
        """A shipment as of its most recently refreshed container."""
        plan = self.plans.get(shipment_id)
        base = self.known_from or self.clock
        return max([base, *(self.as_of(c) for c in plan.containers)] if plan else [base])

    def entity(self, type_: str, id_: str) -> Resource | None:
        """A shipment, container or tracking request of this account (what custom fields hang on)."""
        if type_ == "tracking_request":
            return self.tracking_requests.get(id_)
        return self.resource(type_, id_) if type_ in ("shipment", "container") else None


@dataclass
class World:
    seed: int
    # The moment the world started at (`timeline.py`); each account's clock moves on from it.
    start: datetime
    metro_areas: dict[str, Resource]
    metro_by_code: dict[str, Resource]
    document_schemas: dict[str, Resource]
    accounts: dict[str, Account]  # by API key
    places: Places
    shipping_lines: dict[str, Resource]

    def definition(self, account: Account, definition_id: str) -> Resource | None:
        return account.definitions.get(definition_id)

    def options_of(self, account: Account, definition_id: str) -> list[Resource]:
        return account.options.setdefault(definition_id, [])

    def definition_by_slug(self, account: Account, slug: str) -> Resource | None:
        return next((d for d in account.definitions.values() if d["attributes"]["api_slug"] == slug), None)
