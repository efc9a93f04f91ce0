"""The seeded world (`build_world`): the service's reference data, and per API key an account with
its users, shipments with containers, documents with their email submission and extraction,
tracking requests, the account's own definitions and (if asked) custom field values.

Generated from the seed and the world's start alone (the same options give the same data; times
are placed from the start, see `timeline.py`). Members the service's reference shows but that
carry no information here are derived from drawn values, never drawn themselves, so the drawn data
(container numbers the demo's spreadsheets name) stays the same.
"""

from __future__ import annotations

import random
import string
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from shipsync_sandbox.carriers import CARRIER_NAMES, CARRIERS, SHORT_NAMES, shipping_line_resources
from shipsync_sandbox.container_numbers import check_digit
from shipsync_sandbox.custom_field_store import seed_values
from shipsync_sandbox.document_store import DocumentStore, spacing_for
from shipsync_sandbox.journey_plan import PlanBook
from shipsync_sandbox.places import catalog
from shipsync_sandbox.reference import (
    ACCOUNT_DEFINITIONS,
    INLAND_LOCODES,
    ORIGIN_LOCODES,
    TEMPLATE_DEFINITIONS,
    US_PORT_LOCODES,
    document_schema_resources,
    metro_area_resources,
    place_name,
    place_time_zone,
)
from shipsync_sandbox.resources import Resource, stable_id
from shipsync_sandbox.seed_documents import DocumentSource
from shipsync_sandbox.timeline import epoch_of, iso
from shipsync_sandbox.world import Account, World

COMPANY_NAMES = ("Acme Imports", "Globex Logistics", "Initech Supply", "Umbrella Trading", "Stark Freight")
# What the service calls `open top`; drawn as one token so the seeded draws stay the same.
EQUIPMENT_TYPES = {"open_top": "open top"}


def party_resource(party_id: str, company_name: str) -> Resource:
    """A party (a tracking request's customer) as the reference shapes it: its company name."""
    return {"id": party_id, "type": "party", "attributes": {"company_name": company_name}, "links": {"self": f"/v2/parties/{party_id}"}}


def container_number(rng: random.Random) -> str:
    owner = "".join(rng.choice(string.ascii_uppercase) for _ in range(3)) + "U"
    serial = f"{rng.randrange(1_000_000):06d}"
    return f"{owner}{serial}{check_digit(owner + serial)}"


def definition_resource(definition_id: str, spec: dict[str, Any]) -> tuple[Resource, list[Resource]]:
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


@dataclass(frozen=True)
class AccountSize:
    """How much an account holds. Unset counts follow the documents: a shipment per two documents,
    one to three containers each; no seeded custom field values."""

    documents: int = 200
    shipments: int | None = None
    containers: int | None = None
    custom_field_values: int = 0


def build_world(api_keys: list[str], *, start: datetime, seed: int = 7, size: AccountSize | None = None) -> World:
    """The service's reference data, and an account of `size` per API key, as of `start`."""
    metro = metro_area_resources()
    size = size or AccountSize()
    world = World(
        seed=seed,
        start=start,
        metro_areas={m["id"]: m for m in metro},
        # A code that names two metro areas finds the first published.
        metro_by_code={m["attributes"]["code"]: m for m in reversed(metro)},
        document_schemas={s["id"]: s for s in document_schema_resources()},
        accounts={key: build_account(index, seed=seed, size=size, start=start) for index, key in enumerate(api_keys)},
        places=catalog(),
        shipping_lines={line["id"]: line for line in shipping_line_resources()},
    )
    if size.custom_field_values:
        for index, account in enumerate(world.accounts.values()):
            seed_values(world, account, size.custom_field_values, seed=seed, index=index)
    return world


def build_account(index: int, *, seed: int, size: AccountSize, start: datetime) -> Account:
    rng = random.Random(f"{seed}/{index}")
    account, users = new_account(index, seed, start)
    shipments = [shipment_resource(rng, account.epoch, seed, index, s) for s in range(size.shipments or max(1, size.documents // 2 + 1))]
    add_shipments(account, rng, seed, index, shipments, size.containers)
    source = DocumentSource(seed, index, shipments, users, spacing_for(size.documents, start - account.epoch))
    account.documents = DocumentStore(account, source, size.documents)
    for n, name in enumerate(COMPANY_NAMES):
        party = party_resource(stable_id("party", seed, index, n), name)
        account.parties[party["id"]] = party
    tr_rng = random.Random(f"{seed}/{index}/tracking_requests")
    for t, shipment in enumerate(shipments[: max(8, len(shipments) // 2)]):
        tracking_request = tracking_request_resource(tr_rng, account.epoch, seed, index, t, shipment, users[t % len(users)]["id"])
        account.tracking_requests[tracking_request["id"]] = tracking_request
        if t % 2:
            shipment["attributes"]["tags"] = ["seeded"]
    # The service's templates are the account's definitions like any other (the reference gives
    # them no different rules): each account has its own, to change or delete.
    for kind, spec in [
        *(("template_definition", t) for t in TEMPLATE_DEFINITIONS),
        *(("account_definition", a) for a in ACCOUNT_DEFINITIONS),
    ]:
        definition, options = definition_resource(stable_id(kind, seed, index, spec["api_slug"]), spec)
        account.definitions[definition["id"]] = definition
        account.options[definition["id"]] = options
    return account


def new_account(index: int, seed: int, start: datetime) -> tuple[Account, list[Resource]]:
    """An account with its three users, and nothing else yet; its clock at the world's start."""
    account_id = stable_id("account", seed, index)
    name = COMPANY_NAMES[index % len(COMPANY_NAMES)]
    account = Account(id=account_id, company_name=name, clock=start, epoch=epoch_of(start), known_from=start)
    account.add_related({"id": account_id, "type": "account", "attributes": {"company_name": account.company_name}})
    users: list[Resource] = []
    for u in range(3):
        user: Resource = {
            "id": stable_id("user", seed, index, u),
            "type": "user",
            "attributes": {"first_name": ("Ana", "Ben", "Chen")[u], "last_name": "Ops", "email": f"ops{u}@example.com"},
            "relationships": {"account": {"data": {"type": "account", "id": account_id}}},
        }
        users.append(user)
        account.add_related(user)
    account.key_user_id = str(users[0]["id"])
    return account, users


def add_shipments(
    account: Account, rng: random.Random, seed: int, index: int, shipments: list[Resource], containers_total: int | None = None
) -> None:
    """Store shipments with one to three containers each (or `containers_total` spread evenly), and
    plan their journeys."""
    if not isinstance(account.plans, PlanBook):
        account.plans = PlanBook()
    for n, shipment in enumerate(shipments):
        account.add_related(shipment)
        count = (
            rng.randint(1, 3) if containers_total is None else containers_total // len(shipments) + (n < containers_total % len(shipments))
        )
        containers = [container_resource(rng, seed, index, shipment, c) for c in range(count)]
        for container in containers:
            account.add_related(container)
            account.shipment_of[container["id"]] = shipment["id"]
        shipment["relationships"]["containers"] = {"data": [{"type": "container", "id": c["id"]} for c in containers]}
        account.plans.register(shipment, [c["id"] for c in containers])


def shipment_resource(rng: random.Random, epoch: datetime, seed: int, account: int, n: int) -> Resource:
    pol = rng.choice(ORIGIN_LOCODES)
    pod = rng.choice(US_PORT_LOCODES)
    destination = rng.choice(INLAND_LOCODES) if rng.random() < 0.3 else pod
    scac = rng.choice(CARRIERS)
    departed = epoch + timedelta(days=rng.randint(0, 200))
    bill = f"{scac}{rng.randrange(10**9):09d}"
    eta = departed + timedelta(days=rng.randint(14, 35))
    ref = f"REF-{rng.randrange(10**5):05d}"
    route = Route(pol, pod, destination, departed, eta)
    customer = COMPANY_NAMES[n % len(COMPANY_NAMES)] if n % 3 == 0 else None
    return shipment_of(stable_id("shipment", seed, account, n), bill, scac, route, [ref], customer)


@dataclass(frozen=True)
class Route:
    """Where a shipment goes and when it was to leave and arrive (its journey is planned from these)."""

    pol: str
    pod: str
    destination: str
    departed: datetime
    eta: datetime


def shipment_of(shipment_id: str, bill: str, scac: str, route: Route, ref_numbers: list[str], customer_name: str | None) -> Resource:
    """A shipment as stored: the journey's times are served from its plan (`journey_state.py`)."""
    pol, pod, destination, departed, eta = route.pol, route.pod, route.destination, route.departed, route.eta
    inland_eta = iso(eta + timedelta(days=5)) if destination != pod else None
    return {
        "id": shipment_id,
        "type": "shipment",
        "attributes": {
            "bill_of_lading_number": bill,
            "normalized_number": bill[4:],
            "ref_numbers": ref_numbers,
            "tags": [],
            "customer_name": customer_name,
            "created_at": iso(departed - timedelta(days=3)),
            "shipping_line_scac": scac,
            "shipping_line_name": CARRIER_NAMES[scac],
            "shipping_line_short_name": SHORT_NAMES[scac],
            "port_of_lading_locode": pol,
            "port_of_lading_name": place_name(pol),
            "port_of_discharge_locode": pod,
            "port_of_discharge_name": place_name(pod),
            "destination_locode": destination,
            "destination_name": place_name(destination),
            "pol_etd_at": iso(departed),
            "pol_atd_at": iso(departed),
            "pod_eta_at": iso(eta),
            "pod_original_eta_at": iso(eta),
            "pol_original_etd_at": iso(departed),
            "pod_ata_at": None,
            "destination_eta_at": inland_eta,
            "destination_original_eta_at": inland_eta,
            "destination_ata_at": None,
            "pol_timezone": place_time_zone(pol),
            "pod_timezone": place_time_zone(pod),
            "destination_timezone": place_time_zone(destination),
            "line_tracking_last_attempted_at": None,
            "line_tracking_last_succeeded_at": None,
            "line_tracking_stopped_at": None,
            "line_tracking_stopped_reason": None,
        },
        "relationships": {},
        "links": {"self": f"/v2/shipments/{shipment_id}"},
    }


def container_resource(rng: random.Random, seed: int, account: int, shipment: Resource, n: int) -> Resource:
    number = container_number(rng)
    equipment = rng.choice(("dry", "reefer", "open_top"))
    length = rng.choice((20, 40, 40, 45))
    height = rng.choice(("standard", "high_cube"))
    weight = rng.randint(8_000, 52_000)
    shipped = shipment["attributes"]
    # A customer's boxes carry its references, one per box (derived, not drawn: the draws stay the same).
    references = [f"{ref}-{n + 1}" for ref in shipped["ref_numbers"]] if shipped["customer_name"] else []
    return {
        "id": stable_id("container", seed, account, shipment["id"], n),
        "type": "container",
        "attributes": {
            "number": number,
            "ref_numbers": references,
            "created_at": shipment["attributes"]["created_at"],
            "equipment_type": EQUIPMENT_TYPES.get(equipment, equipment),
            "equipment_length": length,
            "equipment_height": height,
            "weight_in_lbs": weight,
            "current_status": "new",
            "availability_known": False,
            "available_for_pickup": None,
            "holds_at_pod_terminal": [],
            "fees_at_pod_terminal": [],
            "pod_timezone": shipment["attributes"]["pod_timezone"],
        },
        "relationships": {"shipment": {"data": {"type": "shipment", "id": shipment["id"]}}},
    }


# The statuses seeded requests cycle through: (status, failed, retrying). Only a created request
# tracks a shipment (the reference's examples give a pending or failed one none); a created
# request whose shipment stopped tracking shows `tracking_stopped` (`views.py`).
SEEDED_STATUSES = (
    ("created", False, False),
    ("created", False, False),
    ("created", False, False),
    ("created", False, False),
    ("pending", False, False),
    ("failed", True, False),
    ("awaiting_manifest", False, False),
    ("pending", False, True),
)


def tracking_request_resource(
    rng: random.Random, epoch: datetime, seed: int, index: int, n: int, shipment: Resource, user_id: str | None = None
) -> Resource:
    """A tracking request (made by the user `user_id`, when known) as stored;
    `views.tracking_request_view` adds its shipment's tags and numbers.

    A request that tracks no shipment names a number of its own (the shipment's bill of lading
    with the next serial), unless it failed as a duplicate of the one that does."""
    created = epoch + timedelta(days=n % 90, hours=rng.randint(0, 23))
    reason, retries = rng.choice(("booking_cancelled", "not_found", "duplicate")), rng.randint(1, 5)
    status, failed, retrying = SEEDED_STATUSES[n % len(SEEDED_STATUSES)]
    tracks = status == "created"
    bill = str(shipment["attributes"]["bill_of_lading_number"])
    scac, serial = shipment["attributes"]["shipping_line_scac"], bill[4:]
    number = bill if tracks or (failed and reason == "duplicate") else f"{scac}{(int(serial) + 1) % 10 ** len(serial):0{len(serial)}d}"
    tr_id = stable_id("tracking_request", seed, index, n)
    return {
        "id": tr_id,
        "type": "tracking_request",
        "attributes": {
            "request_number": number,
            "request_type": "bill_of_lading",
            "status": status,
            "scac": scac,
            "created_at": iso(created),
            "updated_at": iso(created + timedelta(hours=1)),
            "failed_reason": reason if failed else None,
            "is_retrying": retrying,
            "retry_count": retries if retrying else 0,
        },
        "relationships": {
            "tracked_object": {"data": {"type": "shipment", "id": shipment["id"]} if tracks else None},
            "customer": {"data": {"type": "party", "id": stable_id("party", seed, index, n % len(COMPANY_NAMES))}},
            "user": {"data": {"type": "user", "id": user_id} if user_id else None},
        },
        "links": {"self": f"/v2/tracking_requests/{tr_id}"},
    }
