"""The sandbox's state: service-wide reference data and, per API key, an isolated account.

Everything is generated deterministically from the seed (see `seed.py`), so two sandboxes with
the same options serve the same data. Resources are stored as JSON:API resource dicts; those whose
members are computed from others (a tracking request shows its shipment's tags) are rendered by
`views.py` when served.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from shipsync.api.event_kinds import EVENT_KINDS

Resource = dict[str, Any]
EPOCH = datetime(2026, 1, 5, 8, 0, tzinfo=UTC)


def iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Account:
    """One API key's data; other accounts never see it."""

    id: str
    company_name: str
    documents: dict[str, Resource] = field(default_factory=dict)
    related: dict[tuple[str, str], Resource] = field(default_factory=dict)
    tracking_requests: dict[str, Resource] = field(default_factory=dict)
    definitions: dict[str, Resource] = field(default_factory=dict)
    options: dict[str, list[Resource]] = field(default_factory=dict)
    custom_fields: dict[str, Resource] = field(default_factory=dict)
    webhooks: dict[str, Resource] = field(default_factory=dict)
    # The webhook event kinds this account may subscribe to (its plan); all 43 by default.
    event_kinds: tuple[str, ...] = EVENT_KINDS
    # What the account's requests did, for its own `/_admin/stats`.
    status_counts: dict[int, int] = field(default_factory=dict)

    def resource(self, type_: str, id_: str) -> Resource | None:
        return self.related.get((type_, id_))

    def add_related(self, resource: Resource) -> None:
        self.related[(resource["type"], resource["id"])] = resource

    def of_type(self, type_: str) -> list[Resource]:
        return [r for (t, _), r in sorted(self.related.items()) if t == type_]

    def entity(self, type_: str, id_: str) -> Resource | None:
        """A shipment, container or tracking request of this account (what custom fields hang on)."""
        if type_ == "tracking_request":
            return self.tracking_requests.get(id_)
        return self.resource(type_, id_) if type_ in ("shipment", "container") else None


@dataclass
class World:
    seed: int
    metro_areas: dict[str, Resource]
    metro_by_code: dict[str, Resource]
    document_schemas: dict[str, Resource]
    template_definitions: dict[str, Resource]
    template_options: dict[str, list[Resource]]
    accounts: dict[str, Account]  # by API key

    def definition(self, account: Account, definition_id: str) -> Resource | None:
        return account.definitions.get(definition_id) or self.template_definitions.get(definition_id)

    def options_of(self, account: Account, definition_id: str) -> list[Resource]:
        if definition_id in self.template_options:
            return self.template_options[definition_id]
        return account.options.setdefault(definition_id, [])

    def definition_by_slug(self, account: Account, slug: str) -> Resource | None:
        for source in (account.definitions, self.template_definitions):
            for definition in source.values():
                if definition["attributes"]["api_slug"] == slug:
                    return definition
        return None


def build_world(api_keys: list[str], *, seed: int = 7, documents: int = 200) -> World:
    from shipsync.sandbox.reference import TEMPLATE_DEFINITIONS, document_schema_resources, metro_area_resources, stable_id
    from shipsync.sandbox.seed import build_account, definition_resource

    metro = metro_area_resources()
    templates: dict[str, Resource] = {}
    template_options: dict[str, list[Resource]] = {}
    for spec in TEMPLATE_DEFINITIONS:
        definition, options = definition_resource(stable_id("template_definition", spec["api_slug"]), spec)
        templates[definition["id"]] = definition
        template_options[definition["id"]] = options
    accounts = {key: build_account(index, seed=seed, documents=documents) for index, key in enumerate(api_keys)}
    return World(
        seed=seed,
        metro_areas={m["id"]: m for m in metro},
        metro_by_code={m["attributes"]["code"]: m for m in metro},
        document_schemas={s["id"]: s for s in document_schema_resources()},
        template_definitions=templates,
        template_options=template_options,
        accounts=accounts,
    )
