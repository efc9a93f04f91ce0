"""Sandbox write endpoints: tracking request edits, definitions, options, custom fields, webhooks.

Each create answers 201; each refusal answers 422 with `source.pointer` naming the attribute.
"""

from __future__ import annotations

import re
import secrets
import uuid
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from shipsync.api.webhooks import EVENT_KIND_SET, unknown_event_kinds
from shipsync.sandbox.jsonapi_http import ApiProblem, read_document, single, unprocessable
from shipsync.sandbox.routes_read import not_found
from shipsync.sandbox.state import account_of, state_of
from shipsync.sandbox.world import Account, World, iso
from shipsync.values import DATA_TYPES, FieldRules, ValueProblem, check_value

TR_EDITABLE = {"ref_numbers", "tags", "request_number", "scac"}
TR_READ_ONLY = {"status", "request_type", "created_at", "updated_at", "failed_reason", "is_retrying", "retry_count"}
SLUG = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
SCAC = re.compile(r"^[A-Z]{2,4}$")
ENTITY_FOR_DEFINITION = {"Shipment": "shipment", "Cargo": "container"}


def now_iso() -> str:
    return iso(datetime.now(UTC))


def _string_list(value: Any, pointer: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise unprocessable("must be an array of strings", pointer)
    return value


async def patch_tracking_request(request: Request) -> Response:
    state, account = state_of(request), account_of(request)
    tr = account.tracking_requests.get(request.path_params["id"])
    if tr is None:
        raise not_found("Couldn't find TrackingRequest")
    data = await read_document(request, "tracking_request")
    changes: dict[str, Any] = {}
    for name, value in data["attributes"].items():
        pointer = f"/data/attributes/{name}"
        if name in TR_READ_ONLY:
            raise unprocessable(f"{name} is read-only", pointer)
        if name not in TR_EDITABLE:
            raise unprocessable(f"{name} is not an attribute of tracking_request", pointer)
        if name in ("ref_numbers", "tags"):
            changes[name] = _string_list(value, pointer)
        elif name == "request_number":
            if not isinstance(value, str) or not value.strip():
                raise unprocessable("request_number must be a non-empty string", pointer)
            changes[name] = value.strip()
        elif name == "scac":
            if not isinstance(value, str) or not SCAC.match(value):
                raise unprocessable("scac must be 2 to 4 capital letters", pointer)
            changes[name] = value
    customer = (data.get("relationships") or {}).get("customer")
    relationships = dict(tr["relationships"])
    if customer is not None:
        ref = customer.get("data") if isinstance(customer, dict) else None
        if not (isinstance(ref, dict) and ref.get("type") == "party" and isinstance(ref.get("id"), str)):
            raise unprocessable("customer must be {data: {type: party, id}}", "/data/relationships/customer")
        relationships["customer"] = {"data": {"type": "party", "id": ref["id"]}}
    tr["attributes"] = {**tr["attributes"], **changes, "updated_at": now_iso()}
    tr["relationships"] = relationships
    if changes or customer is not None:
        kind = "tracking_request.failed" if tr["attributes"]["status"] == "failed" else "tracking_request.succeeded"
        shipment = account.resource("shipment", tr["relationships"]["tracked_object"]["data"]["id"])
        state.emit(account, kind, tr, [shipment] if shipment else [])
    return single(tr, request)


def _required_text(attributes: dict[str, Any], name: str) -> str:
    value = attributes.get(name)
    if not isinstance(value, str) or not value.strip():
        raise unprocessable(f"{name} is required", f"/data/attributes/{name}")
    return value.strip()


async def create_definition(request: Request) -> Response:
    state, account = state_of(request), account_of(request)
    attributes = (await read_document(request, "custom_field_definition"))["attributes"]
    entity_type = _required_text(attributes, "entity_type")
    if entity_type not in ENTITY_FOR_DEFINITION:
        raise unprocessable("entity_type must be Shipment or Cargo", "/data/attributes/entity_type")
    slug = _required_text(attributes, "api_slug")
    if not SLUG.match(slug):
        raise unprocessable("api_slug must be lowercase letters, digits and _ (starting with a letter)", "/data/attributes/api_slug")
    if state.world.definition_by_slug(account, slug) is not None:
        raise unprocessable("api_slug has already been taken", "/data/attributes/api_slug")
    display_name = _required_text(attributes, "display_name")
    data_type = _required_text(attributes, "data_type")
    if data_type not in DATA_TYPES:
        raise unprocessable(f"data_type must be one of {', '.join(DATA_TYPES)}", "/data/attributes/data_type")
    if data_type == "reference" and not attributes.get("reference_type"):
        raise unprocessable("reference_type is required when data_type is reference", "/data/attributes/reference_type")
    validation = attributes.get("validation") or {}
    if not isinstance(validation, dict) or set(validation) - {"required", "pattern", "max_length"}:
        raise unprocessable("validation takes required, pattern and max_length", "/data/attributes/validation")
    definition_id = str(uuid.uuid4())
    definition = {
        "id": definition_id,
        "type": "custom_field_definition",
        "attributes": {
            "entity_type": entity_type,
            "api_slug": slug,
            "display_name": display_name,
            "data_type": data_type,
            "description": attributes.get("description"),
            "reference_type": attributes.get("reference_type"),
            "validation": validation,
            "default_format": attributes.get("default_format"),
            "default_value": attributes.get("default_value"),
        },
        "relationships": {"options": {"data": []}},
        "links": {"self": f"/v2/custom_field_definitions/{definition_id}"},
    }
    account.definitions[definition_id] = definition
    account.options[definition_id] = []
    return single(definition, request, status=201)


async def create_option(request: Request) -> Response:
    state, account = state_of(request), account_of(request)
    definition_id = request.path_params["id"]
    if definition_id not in account.definitions:
        # Template definitions' options belong to the service; another account's are invisible.
        if definition_id in state.world.template_definitions:
            raise ApiProblem(403, "Forbidden", "options of template definitions cannot be changed")
        raise not_found("Couldn't find CustomFieldDefinition")
    attributes = (await read_document(request, "custom_field_option"))["attributes"]
    label = _required_text(attributes, "label")
    value = _required_text(attributes, "value")
    options = account.options.setdefault(definition_id, [])
    if any(o["attributes"]["value"] == value for o in options):
        raise unprocessable("value has already been taken", "/data/attributes/value")
    position = attributes.get("position", len(options))
    option_id = str(uuid.uuid4())
    option = {
        "id": option_id,
        "type": "custom_field_option",
        "attributes": {"label": label, "value": value, "position": position},
        "links": {"self": f"/v2/custom_field_definitions/{definition_id}/options/{option_id}"},
    }
    options.append(option)
    account.definitions[definition_id]["relationships"]["options"]["data"].append({"type": "custom_field_option", "id": option_id})
    return single(option, request, status=201)


def _rules(world: World, account: Account, definition: dict[str, Any]) -> FieldRules:
    options = [o["attributes"]["value"] for o in world.options_of(account, definition["id"])]
    return FieldRules.of(definition["attributes"], options)


def _checked(value: Any, rules: FieldRules) -> str:
    try:
        return check_value(value, rules)
    except ValueProblem as problem:
        raise unprocessable(str(problem), "/data/attributes/value") from None


async def create_custom_field(request: Request) -> Response:
    state, account = state_of(request), account_of(request)
    data = await read_document(request, "custom_field")
    attributes = data["attributes"]
    slug = _required_text(attributes, "api_slug")
    if "value" not in attributes:
        raise unprocessable("value is required", "/data/attributes/value")
    entity = ((data.get("relationships") or {}).get("entity") or {}).get("data")
    if not (isinstance(entity, dict) and entity.get("type") in ("shipment", "container") and isinstance(entity.get("id"), str)):
        raise unprocessable("entity must be {data: {type: shipment|container, id}}", "/data/relationships/entity")
    if account.resource(entity["type"], entity["id"]) is None:
        raise unprocessable(f"{entity['type']} {entity['id']} does not exist", "/data/relationships/entity")
    definition = state.world.definition_by_slug(account, slug)
    if definition is None:
        raise unprocessable(f"no custom field definition with api_slug {slug!r}", "/data/attributes/api_slug")
    if ENTITY_FOR_DEFINITION[definition["attributes"]["entity_type"]] != entity["type"]:
        raise unprocessable(
            f"{slug} applies to {definition['attributes']['entity_type']}, not {entity['type']}",
            "/data/relationships/entity",
        )
    for existing in account.custom_fields.values():
        if existing["attributes"]["api_slug"] == slug and existing["relationships"]["entity"]["data"] == {
            "type": entity["type"],
            "id": entity["id"],
        }:
            raise unprocessable(f"{slug} already has a value on this {entity['type']}", "/data/attributes/api_slug")
    display = _checked(attributes["value"], _rules(state.world, account, definition))
    cf_id = str(uuid.uuid4())
    custom_field = {
        "id": cf_id,
        "type": "custom_field",
        "attributes": {"api_slug": slug, "value": attributes["value"], "display_value": display},
        "relationships": {
            "entity": {"data": {"type": entity["type"], "id": entity["id"]}},
            "definition": {"data": {"type": "custom_field_definition", "id": definition["id"]}},
        },
        "links": {"self": f"/v2/custom_fields/{cf_id}"},
    }
    account.custom_fields[cf_id] = custom_field
    return single(custom_field, request, status=201)


async def patch_custom_field(request: Request) -> Response:
    state, account = state_of(request), account_of(request)
    custom_field = account.custom_fields.get(request.path_params["id"])
    if custom_field is None:
        raise not_found("Couldn't find CustomField")
    attributes = (await read_document(request, "custom_field"))["attributes"]
    if (
        set(attributes) - {"value", "api_slug"}
        or attributes.get("api_slug", custom_field["attributes"]["api_slug"]) != custom_field["attributes"]["api_slug"]
    ):
        raise unprocessable("only value can be changed", "/data/attributes")
    if "value" not in attributes:
        raise unprocessable("value is required", "/data/attributes/value")
    definition = state.world.definition(account, custom_field["relationships"]["definition"]["data"]["id"])
    assert definition is not None
    display = _checked(attributes["value"], _rules(state.world, account, definition))
    custom_field["attributes"] = {**custom_field["attributes"], "value": attributes["value"], "display_value": display}
    return single(custom_field, request)


async def delete_custom_field(request: Request) -> Response:
    if account_of(request).custom_fields.pop(request.path_params["id"], None) is None:
        raise not_found("Couldn't find CustomField")
    return Response(status_code=200)


def _valid_url(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    parts = urlsplit(value)
    return parts.scheme in ("http", "https") and bool(parts.netloc)


async def create_webhook(request: Request) -> Response:
    account = account_of(request)
    attributes = (await read_document(request, "webhook"))["attributes"]
    if not _valid_url(attributes.get("url")):
        raise unprocessable("url must be an http(s) URL", "/data/attributes/url")
    events = attributes.get("events", [])
    if not isinstance(events, list) or not all(isinstance(e, str) for e in events):
        raise unprocessable("events must be an array of event kinds", "/data/attributes/events")
    if bad := [e for e in events if e not in EVENT_KIND_SET]:
        raise unprocessable(f"unknown event kinds: {', '.join(unknown_event_kinds(bad))}", "/data/attributes/events")
    active = attributes.get("active", True)
    if not isinstance(active, bool):
        raise unprocessable("active must be true or false", "/data/attributes/active")
    headers = attributes.get("headers") or []
    if not isinstance(headers, list) or not all(
        isinstance(h, dict) and isinstance(h.get("name"), str) and isinstance(h.get("value"), str) for h in headers
    ):
        raise unprocessable("headers must be an array of {name, value}", "/data/attributes/headers")
    webhook_id = str(uuid.uuid4())
    webhook = {
        "id": webhook_id,
        "type": "webhook",
        "attributes": {
            "url": attributes["url"],
            "active": active,
            "events": events,
            "secret": secrets.token_hex(32),
            "headers": [{"name": h["name"], "value": h["value"]} for h in headers],
        },
        "links": {"self": f"/v2/webhooks/{webhook_id}"},
    }
    account.webhooks[webhook_id] = webhook
    return single(webhook, request, status=201)


async def delete_webhook(request: Request) -> Response:
    if account_of(request).webhooks.pop(request.path_params["id"], None) is None:
        raise not_found("Couldn't find Webhook")
    return Response(status_code=200)


WRITE_ROUTES = [
    Route("/v2/tracking_requests/{id}", patch_tracking_request, methods=["PATCH"]),
    Route("/v2/custom_field_definitions", create_definition, methods=["POST"]),
    Route("/v2/custom_field_definitions/{id}/options", create_option, methods=["POST"]),
    Route("/v2/custom_fields", create_custom_field, methods=["POST"]),
    Route("/v2/custom_fields/{id}", patch_custom_field, methods=["PATCH"]),
    Route("/v2/custom_fields/{id}", delete_custom_field, methods=["DELETE"]),
    Route("/v2/webhooks", create_webhook, methods=["POST"]),
    Route("/v2/webhooks/{id}", delete_webhook, methods=["DELETE"]),
]
