"""Starting to track (api-facts: `POST /tracking_requests`): what a create must carry, the request
as the service answers it at once (`pending`), and how it settles a while later.

A create names the number (`request_number`), what it is (`request_type`: `bill_of_lading`,
`booking_number` or `container`) and its carrier (`scac`, four letters, one the service knows and
that tracks that kind of number), or asks the service to detect the carrier
(`auto_detect_vocc_scac`). It may carry `ref_numbers` and `shipment_tags` and custom field values
(`initial_custom_fields`) that wait for the shipment and its containers. A request for a number
and carrier that another request is already tracking (pending, awaiting its manifest, or created)
is refused as the service refuses it: 422 with `code: duplicate` at `/data/attributes/request_number`.

The request then settles (`settle`): carrier detection picks the line (`number_inference.py`) or
fails it (`scac_auto_detect_failed`); a number whose shipment the account tracks already fails
(`duplicate`); a container number whose check digit is wrong is not found (`not_found`); anything
else succeeds: the line's shipment and containers appear, mid-journey, with what the request
staged, and the account's webhooks hear `tracking_request.succeeded` or `tracking_request.failed`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

from shipsync_sandbox.carriers import line_of, tracks
from shipsync_sandbox.container_numbers import check_digit_passes
from shipsync_sandbox.custom_field_store import custom_field_resource, shown_as
from shipsync_sandbox.entities import value_type_of
from shipsync_sandbox.jsonapi_http import ApiProblem, to_one, unprocessable
from shipsync_sandbox.number_inference import NotANumber, guess
from shipsync_sandbox.reference import INLAND_LOCODES, ORIGIN_LOCODES, US_PORT_LOCODES
from shipsync_sandbox.resources import Resource, stable_id
from shipsync_sandbox.seed import Route, add_shipments, shipment_of
from shipsync_sandbox.timeline import now_iso
from shipsync_sandbox.value_rules import ValueRefused
from shipsync_sandbox.views import tracking_request_view
from shipsync_sandbox.world import Account, Staged, World

REQUEST_TYPES = ("bill_of_lading", "booking_number", "container")
# A request in one of these is tracking its number: a second one for the same number and carrier is a duplicate.
ACTIVE = ("pending", "awaiting_manifest", "created")
ATTRIBUTES = ("request_type", "request_number", "scac", "auto_detect_vocc_scac", "ref_numbers", "shipment_tags", "initial_custom_fields")


@dataclass(frozen=True)
class NewRequest:
    request_type: str
    request_number: str
    scac: str | None  # None: the service detects it
    staged: Staged
    customer: dict[str, Any] | None


def _text(attributes: dict[str, Any], name: str, label: str) -> str:
    value = attributes.get(name)
    if value is not None and not isinstance(value, str):
        raise unprocessable(f"{label} must be a string", f"/data/attributes/{name}")
    if not value or not value.strip():
        raise unprocessable(f"{label} can't be blank", f"/data/attributes/{name}")
    return value.strip()


def _strings(attributes: dict[str, Any], name: str) -> tuple[str, ...]:
    value = attributes.get(name)
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise unprocessable(f"{name} must be an array of strings", f"/data/attributes/{name}")
    return tuple(dict.fromkeys(value))


def _carrier(attributes: dict[str, Any], request_type: str) -> str | None:
    detect = attributes.get("auto_detect_vocc_scac", False)
    if not isinstance(detect, bool):
        raise unprocessable("auto_detect_vocc_scac must be true or false", "/data/attributes/auto_detect_vocc_scac")
    scac = attributes.get("scac")
    if scac is None or (isinstance(scac, str) and not scac.strip()):
        if detect:
            return None
        raise unprocessable("Scac can't be blank", "/data/attributes/scac")
    if not isinstance(scac, str):
        raise unprocessable("scac must be a string", "/data/attributes/scac")
    line = line_of(scac.strip().upper())
    if line is None:
        raise unprocessable(f"Scac '{scac}' is not recognized", "/data/attributes/scac")
    if not tracks(line, request_type):
        raise unprocessable(
            f"Scac '{scac}' is not supported for {request_type.replace('_', ' ')} tracking by {line[1]}", "/data/attributes/scac"
        )
    return line[0]


def _staged_fields(world: World, account: Account, value: Any) -> tuple[tuple[tuple[str, Any], ...], tuple[tuple[str, Any, str], ...]]:
    """`initial_custom_fields`, each slug a definition of the right entity type, each value one it takes."""
    pointer = "/data/attributes/initial_custom_fields"
    if value is None:
        return (), ()
    if not isinstance(value, dict) or set(value) - {"shipment", "containers"}:
        raise unprocessable("initial_custom_fields must be {shipment: [...], containers: [...]}", pointer)
    staged: dict[str, list[tuple[str, Any, str]]] = {"shipment": [], "containers": []}
    for part, entity in (("shipment", "shipment"), ("containers", "container")):
        entries = value.get(part) or []
        if not isinstance(entries, list):
            raise unprocessable(f"{part} must be an array of {{api_slug, value}}", f"{pointer}/{part}")
        for n, entry in enumerate(entries):
            where = f"{pointer}/{part}/{n}"
            if not isinstance(entry, dict) or not isinstance(entry.get("api_slug"), str) or "value" not in entry:
                raise unprocessable("each entry must be {api_slug, value}", where)
            definition = world.definition_by_slug(account, entry["api_slug"])
            if definition is None or value_type_of(definition["attributes"]["entity_type"]) != entity:
                raise unprocessable(f"{entry['api_slug']} is not a custom field definition of the {entity}", f"{where}/api_slug")
            try:
                shown_as(world, account, definition, entry["value"])
            except ValueRefused as refused:
                raise unprocessable(f"value {refused}", f"{where}/value") from None
            number = entry.get("number") or ""
            if not isinstance(number, str):
                raise unprocessable("number must be a container number", f"{where}/number")
            staged[part].append((entry["api_slug"], entry["value"], number.strip().upper()))
    return tuple((slug, v) for slug, v, _ in staged["shipment"]), tuple(staged["containers"])


def checked_request(world: World, account: Account, data: dict[str, Any]) -> NewRequest:
    """What a create body asks for, or the service's 422 naming the first member it refuses."""
    attributes = data["attributes"]
    if unknown := sorted(set(attributes) - set(ATTRIBUTES)):
        raise unprocessable(f"{unknown[0]} is not an attribute a tracking request takes", f"/data/attributes/{unknown[0]}")
    request_type = _text(attributes, "request_type", "Request type")
    if request_type not in REQUEST_TYPES:
        raise unprocessable(f"Request type must be one of {', '.join(REQUEST_TYPES)}", "/data/attributes/request_type")
    number = _text(attributes, "request_number", "Request number")
    scac = _carrier(attributes, request_type)
    shipment_fields, container_fields = _staged_fields(world, account, attributes.get("initial_custom_fields"))
    staged = Staged(
        _strings(attributes, "ref_numbers"), _strings(attributes, "shipment_tags"), shipment_fields, container_fields, scac is None
    )
    customer = to_one(data, "customer")
    if customer is not None and (customer["type"] != "party" or customer["id"] not in account.parties):
        raise unprocessable("customer must be a party of the account", "/data/relationships/customer")
    return NewRequest(request_type, number, scac, staged, customer)


def duplicate_of(account: Account, new: NewRequest) -> Resource | None:
    """A request that tracks the same number with the same carrier (any carrier, when detecting)."""
    for tracking in account.tracking_requests.values():
        attributes = tracking_request_view(account, tracking)["attributes"]
        same_number = str(attributes["request_number"]).upper() == new.request_number.upper()
        same_carrier = new.scac is None or attributes["scac"] in (None, new.scac)
        if same_number and same_carrier and attributes["status"] in ACTIVE:
            return tracking
    return None


def refuse_duplicate(new: NewRequest, existing: Resource) -> ApiProblem:
    scac = existing["attributes"]["scac"] or new.scac
    detail = (
        f"Request number '{new.request_number}' with scac '{scac}' already exists in a tracking_request with a pending or created status"
    )
    return ApiProblem(422, "Unprocessable Entity", detail, pointer="/data/attributes/request_number", code="duplicate")


def open_request(account: Account, new: NewRequest) -> Resource:
    """The request as created: pending, its carrier null while it is being detected."""
    # Drawn from what it asks for and how many came before: the same calls make the same world.
    request_id = stable_id("tracking_request", "api", account.id, len(account.tracking_requests), new.request_number)
    created = now_iso()
    request = {
        "id": request_id,
        "type": "tracking_request",
        "attributes": {
            "request_number": new.request_number,
            "request_type": new.request_type,
            "status": "pending",
            "scac": new.scac,
            "created_at": created,
            "updated_at": created,
            "failed_reason": None,
            "is_retrying": False,
            "retry_count": 0,
        },
        "relationships": {
            "tracked_object": {"data": None},
            "customer": {"data": new.customer},
            "user": {"data": {"type": "user", "id": account.key_user_id} if account.key_user_id else None},
        },
        "links": {"self": f"/v2/tracking_requests/{request_id}"},
    }
    account.tracking_requests[request_id] = request
    account.staged[request_id] = new.staged
    return request


def add_reference_number(account: Account, request: Resource, number: str) -> None:
    """`PATCH ref_number`: the number joins the reference numbers the request shows (its
    shipment's once it has one, else those it carries for its shipment)."""
    shipment = tracked_shipment(account, request)
    if shipment is not None:
        numbers = list(shipment["attributes"].get("ref_numbers") or [])
        shipment["attributes"] = {**shipment["attributes"], "ref_numbers": [*numbers, number] if number not in numbers else numbers}
        return
    staged = account.staged.get(request["id"]) or Staged((), (), (), (), False)
    if number not in staged.ref_numbers:
        account.staged[request["id"]] = replace(staged, ref_numbers=(*staged.ref_numbers, number))


def tracked_shipment(account: Account, request: Resource) -> Resource | None:
    tracked = ((request.get("relationships") or {}).get("tracked_object") or {}).get("data")
    return account.resource("shipment", tracked["id"]) if isinstance(tracked, dict) else None


def _numbers_tracked(account: Account) -> set[str]:
    shipments = account.of_type("shipment")
    containers = account.of_type("container")
    return {str(s["attributes"]["bill_of_lading_number"]).upper() for s in shipments} | {
        str(c["attributes"]["number"]).upper() for c in containers
    }


def _fail(request: Resource, reason: str) -> None:
    request["attributes"] = {**request["attributes"], "status": "failed", "failed_reason": reason, "updated_at": now_iso()}


def _new_shipment(world: World, account: Account, request: Resource, staged: Staged) -> Resource:
    """The line's shipment for the request: it left days ago and arrives in two weeks or more (a
    journey is at least 14 days), so it is on its way now."""
    attributes = request["attributes"]
    rng = random.Random(f"tracked/{request['id']}")
    pod = rng.choice(US_PORT_LOCODES)
    route_draw = (rng.choice(ORIGIN_LOCODES), pod, rng.choice(INLAND_LOCODES) if rng.random() < 0.3 else pod)
    departed = account.clock.replace(minute=0, second=0, microsecond=0) - timedelta(days=rng.randint(2, 9))
    route = Route(*route_draw, departed, departed + timedelta(days=rng.randint(14, 35)))
    scac = attributes["scac"]
    is_container = attributes["request_type"] == "container"
    bill = f"{scac}{rng.randrange(10**9):09d}" if is_container else attributes["request_number"]
    shipment = shipment_of(stable_id("shipment", "tracked", request["id"]), bill, scac, route, list(staged.ref_numbers), None)
    shipment["attributes"].update(tags=list(staged.shipment_tags), created_at=now_iso())  # tracked from now
    add_shipments(account, rng, world.seed, -1, [shipment], 1 if is_container else None)
    for ref in shipment["relationships"]["containers"]["data"]:
        account.refreshed[ref["id"]] = account.clock  # tracked from now: known as of now
    if is_container:
        box = account.resource("container", shipment["relationships"]["containers"]["data"][0]["id"])
        if box is not None:
            box["attributes"]["number"] = attributes["request_number"].upper()
    return shipment


def _set_value(world: World, account: Account, entity: tuple[str, str], slug: str, value: Any) -> None:
    definition = world.definition_by_slug(account, slug)
    if definition is None:
        return
    try:
        display = shown_as(world, account, definition, value)
    except ValueRefused:
        return  # checked when the request was made; a definition changed since refuses it now
    existing = account.custom_fields.on(entity, slug)
    made = custom_field_resource(definition, entity, value, display, existing["id"] if existing else None)
    account.custom_fields[made["id"]] = made


def _apply_staged(world: World, account: Account, shipment: Resource, staged: Staged) -> None:
    for slug, value in staged.shipment_fields:
        _set_value(world, account, ("shipment", shipment["id"]), slug, value)
    boxes = [account.resource("container", ref["id"]) for ref in shipment["relationships"]["containers"]["data"]]
    for slug, value, number in staged.container_fields:
        for box in boxes:
            if box is not None and number in ("", str(box["attributes"]["number"]).upper()):
                _set_value(world, account, ("container", box["id"]), slug, value)


def settle(world: World, account: Account, request_id: str) -> tuple[str, list[Resource]] | None:
    """Detect the carrier, ask the line, and make the shipment: the kind of the notification the
    request's settling sends and the records it includes; None if it is not pending any more."""
    request = account.tracking_requests.get(request_id)
    if request is None or request["attributes"]["status"] != "pending":
        return None
    attributes = request["attributes"]
    number = str(attributes["request_number"]).upper()
    if attributes["scac"] is None:
        try:
            detected = guess(number).scac
        except NotANumber:
            detected = None
        if detected is None:
            _fail(request, "scac_auto_detect_failed")
            return "tracking_request.failed", []
        request["attributes"] = attributes = {**attributes, "scac": detected}
    if number in _numbers_tracked(account):
        _fail(request, "duplicate")
        return "tracking_request.failed", []
    if attributes["request_type"] == "container" and not check_digit_passes(number):
        _fail(request, "not_found")
        return "tracking_request.failed", []
    staged = account.staged.get(request_id) or Staged((), (), (), (), False)
    shipment = _new_shipment(world, account, request, staged)
    _apply_staged(world, account, shipment, staged)
    del account.staged[request_id]
    request["attributes"] = {**attributes, "status": "created", "updated_at": now_iso()}
    request["relationships"] = {**request["relationships"], "tracked_object": {"data": {"type": "shipment", "id": shipment["id"]}}}
    return "tracking_request.succeeded", [shipment]
