"""The sandbox's state: service-wide reference data and, per API key, an isolated account.

Everything is generated deterministically from the seed, so two sandboxes with the same options
serve the same data. Resources are stored as JSON:API resource dicts, ready to serve.
"""

from __future__ import annotations

import random
import string
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from shipsync.iso6346 import check_digit
from shipsync.sandbox.reference import (
    INLAND_LOCODES,
    ORIGIN_LOCODES,
    TEMPLATE_DEFINITIONS,
    US_PORT_LOCODES,
    current_schema_version,
    document_schema_resources,
    metro_area_resources,
    stable_id,
)

Resource = dict[str, Any]
EPOCH = datetime(2026, 1, 5, 8, 0, tzinfo=UTC)
CARRIERS = ("MAEU", "MSCU", "CMDU", "COSU", "HLCU", "ONEY", "EGLV", "ZIMU")
DOCUMENT_TYPES = ("commercial_invoice", "packing_list", "bill_of_lading", "arrival_notice")
COMPANY_NAMES = ("Acme Imports", "Globex Logistics", "Initech Supply", "Umbrella Trading", "Stark Freight")


def iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def container_number(rng: random.Random) -> str:
    owner = "".join(rng.choice(string.ascii_uppercase) for _ in range(3)) + "U"
    serial = f"{rng.randrange(1_000_000):06d}"
    return f"{owner}{serial}{check_digit(owner + serial)}"


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

    def resource(self, type_: str, id_: str) -> Resource | None:
        return self.related.get((type_, id_))

    def add_related(self, resource: Resource) -> None:
        self.related[(resource["type"], resource["id"])] = resource


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
    metro = metro_area_resources()
    templates: dict[str, Resource] = {}
    template_options: dict[str, list[Resource]] = {}
    for spec in TEMPLATE_DEFINITIONS:
        definition, options = _definition_resource(stable_id("template_definition", spec["api_slug"]), spec)
        templates[definition["id"]] = definition
        template_options[definition["id"]] = options
    accounts = {key: _build_account(index, seed=seed, documents=documents) for index, key in enumerate(api_keys)}
    return World(
        seed=seed,
        metro_areas={m["id"]: m for m in metro},
        metro_by_code={m["attributes"]["code"]: m for m in metro},
        document_schemas={s["id"]: s for s in document_schema_resources()},
        template_definitions=templates,
        template_options=template_options,
        accounts=accounts,
    )


def _definition_resource(definition_id: str, spec: dict[str, Any]) -> tuple[Resource, list[Resource]]:
    attributes = {
        "entity_type": spec["entity_type"],
        "api_slug": spec["api_slug"],
        "display_name": spec["display_name"],
        "data_type": spec["data_type"],
        "description": spec.get("description"),
        "reference_type": spec.get("reference_type"),
        "validation": spec.get("validation") or {},
        "default_format": spec.get("default_format"),
        "default_value": spec.get("default_value"),
    }
    options = [
        {
            "id": (option_id := stable_id("option", definition_id, value)),
            "type": "custom_field_option",
            "attributes": {"label": value.replace("_", " ").title(), "value": value, "position": i},
            "links": {"self": f"/v2/custom_field_definitions/{definition_id}/options/{option_id}"},
        }
        for i, value in enumerate(spec.get("options") or [])
    ]
    definition = {
        "id": definition_id,
        "type": "custom_field_definition",
        "attributes": attributes,
        "relationships": {"options": {"data": [{"type": "custom_field_option", "id": o["id"]} for o in options]}},
        "links": {"self": f"/v2/custom_field_definitions/{definition_id}"},
    }
    return definition, options


def _build_account(index: int, *, seed: int, documents: int) -> Account:
    rng = random.Random(f"{seed}/{index}")
    account, users = new_account(index, seed)
    shipments = [_shipment(rng, seed, index, s) for s in range(max(1, documents // 2 + 1))]
    add_shipments(account, rng, seed, index, shipments)
    for d in range(documents):
        _add_document(account, rng, seed, index, d, shipments, users)
    for t, shipment in enumerate(shipments[: max(8, len(shipments) // 2)]):
        tracking_request = _tracking_request(rng, seed, index, t, shipment)
        account.tracking_requests[tracking_request["id"]] = tracking_request
    return account


def new_account(index: int, seed: int) -> tuple[Account, list[Resource]]:
    """An account with its three users, and nothing else yet."""
    account_id = stable_id("account", seed, index)
    account = Account(id=account_id, company_name=COMPANY_NAMES[index % len(COMPANY_NAMES)])
    account.add_related({"id": account_id, "type": "account", "attributes": {"company_name": account.company_name}})
    users = []
    for u in range(3):
        user = {
            "id": stable_id("user", seed, index, u),
            "type": "user",
            "attributes": {"first_name": ("Ana", "Ben", "Chen")[u], "last_name": "Ops", "email": f"ops{u}@example.com"},
            "relationships": {"account": {"data": {"type": "account", "id": account_id}}},
        }
        users.append(user)
        account.add_related(user)
    return account, users


def add_shipments(account: Account, rng: random.Random, seed: int, index: int, shipments: list[Resource]) -> None:
    """Store shipments with one to three containers each."""
    for shipment in shipments:
        account.add_related(shipment)
        containers = [_container(rng, seed, index, shipment, c) for c in range(rng.randint(1, 3))]
        for container in containers:
            account.add_related(container)
        shipment["relationships"]["containers"] = {"data": [{"type": "container", "id": c["id"]} for c in containers]}


def _shipment(rng: random.Random, seed: int, account: int, n: int) -> Resource:
    pol = rng.choice(ORIGIN_LOCODES)
    pod = rng.choice(US_PORT_LOCODES)
    destination = rng.choice(INLAND_LOCODES) if rng.random() < 0.3 else pod
    scac = rng.choice(CARRIERS)
    departed = EPOCH + timedelta(days=rng.randint(0, 200))
    return {
        "id": stable_id("shipment", seed, account, n),
        "type": "shipment",
        "attributes": {
            "bill_of_lading_number": f"{scac}{rng.randrange(10**9):09d}",
            "shipping_line_scac": scac,
            "port_of_lading_locode": pol,
            "port_of_discharge_locode": pod,
            "destination_locode": destination,
            "pod_eta_at": iso(departed + timedelta(days=rng.randint(14, 35))),
            "ref_numbers": [f"REF-{rng.randrange(10**5):05d}"],
        },
        "relationships": {},
    }


def _container(rng: random.Random, seed: int, account: int, shipment: Resource, n: int) -> Resource:
    return {
        "id": stable_id("container", seed, account, shipment["id"], n),
        "type": "container",
        "attributes": {
            "number": container_number(rng),
            "equipment_type": rng.choice(("dry", "reefer", "open_top")),
            "equipment_length": rng.choice((20, 40, 40, 45)),
            "equipment_height": rng.choice(("standard", "high_cube")),
            "weight_in_lbs": rng.randint(8_000, 52_000),
        },
        "relationships": {"shipment": {"data": {"type": "shipment", "id": shipment["id"]}}},
    }


def _add_document(
    account: Account,
    rng: random.Random,
    seed: int,
    index: int,
    d: int,
    shipments: list[Resource],
    users: list[Resource],
    first_shipment: int = 0,
) -> None:
    """Add document `d`; `shipments` starts at shipment number `first_shipment` (for streaming)."""
    doc_id = stable_id("document", seed, index, d)
    doc_type = DOCUMENT_TYPES[d % len(DOCUMENT_TYPES)]
    created = EPOCH + timedelta(hours=d * 3 + rng.randint(0, 2))
    linked_shipments = [shipments[(d // 2 - first_shipment) % len(shipments)]]
    if rng.random() < 0.2:
        linked_shipments.append(shipments[rng.randrange(len(shipments))])
    linked_shipments = list({s["id"]: s for s in linked_shipments}.values())
    cargo_refs = [ref for s in linked_shipments for ref in s["relationships"]["containers"]["data"][: rng.randint(1, 3)]]
    email = {
        "id": stable_id("email_submission", seed, index, d),
        "type": "email_submission",
        "attributes": {
            "from_address": f"docs+{d}@forwarder.example.com",
            "subject": f"{doc_type} {d}",
            "received_at": iso(created),
        },
    }
    representation = {
        "id": stable_id("document_representation", seed, index, d),
        "type": "document_representation",
        "attributes": {
            "schema_version": current_schema_version(doc_type),
            "status": "extracted",
            "extracted_at": iso(created + timedelta(minutes=4)),
            "fields": {"reference": f"{doc_type[:2].upper()}-{d:06d}"},
        },
        "relationships": {"document": {"data": {"type": "document", "id": doc_id}}},
    }
    user = users[d % len(users)]
    for resource in (email, representation):
        account.add_related(resource)
    source = "email" if d % 3 else "upload"
    file_name = f"{doc_type}_{d:06d}.pdf"
    account.documents[doc_id] = {
        "id": doc_id,
        "type": "document",
        "attributes": {
            "id": doc_id,
            "name": f"{doc_type.replace('_', ' ').title()} {d}",
            "document_type": doc_type,
            "document_type_manual": doc_type if d % 7 == 0 else None,
            "classification_notes": "classified automatically" if d % 5 else "reviewed by operator",
            "source": source,
            "file_name": file_name,
            "file_content_type": "application/pdf",
            "file_size_bytes": rng.randint(20_000, 4_000_000),
            "created_at": iso(created),
            "updated_at": iso(created + timedelta(minutes=5)),
        },
        "relationships": {
            "account": {"data": {"type": "account", "id": account.id}},
            "user": {"data": {"type": "user", "id": user["id"]}},
            "email_submission": {"data": {"type": "email_submission", "id": email["id"]}},
            "last_document_representation": {"data": {"type": "document_representation", "id": representation["id"]}},
            "shipments": {"data": [{"type": "shipment", "id": s["id"]} for s in linked_shipments]},
            "cargos": {"data": cargo_refs},
        },
        "links": {"self": f"/v2/documents/{doc_id}", "download": f"/v2/documents/{doc_id}/download"},
    }


def _tracking_request(rng: random.Random, seed: int, index: int, n: int, shipment: Resource) -> Resource:
    created = EPOCH + timedelta(days=n % 90, hours=rng.randint(0, 23))
    status, failed_reason, retrying, retries = [
        ("pending", None, False, 0),
        ("created", None, False, 0),
        ("failed", rng.choice(("booking_cancelled", "not_found", "duplicate")), False, 0),
        ("pending", None, True, rng.randint(1, 5)),
    ][n % 4]
    tr_id = stable_id("tracking_request", seed, index, n)
    return {
        "id": tr_id,
        "type": "tracking_request",
        "attributes": {
            "request_number": shipment["attributes"]["bill_of_lading_number"],
            "request_type": "bill_of_lading",
            "status": status,
            "scac": shipment["attributes"]["shipping_line_scac"],
            "created_at": iso(created),
            "updated_at": iso(created + timedelta(hours=1)),
            "ref_numbers": list(shipment["attributes"]["ref_numbers"]),
            "tags": ["seeded"] if n % 2 else [],
            "failed_reason": failed_reason,
            "is_retrying": retrying,
            "retry_count": retries,
        },
        "relationships": {
            "tracked_object": {"data": {"type": "shipment", "id": shipment["id"]}},
            "customer": {"data": {"type": "party", "id": stable_id("party", seed, index, n % 5)}},
        },
        "links": {"self": f"/v2/tracking_requests/{tr_id}"},
    }
