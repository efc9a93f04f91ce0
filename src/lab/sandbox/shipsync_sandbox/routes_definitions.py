"""Sandbox custom field definitions and their options: listing (display_name is a prefix), reading,
creating (`Shipment` or `Container`), editing (PATCH) and deleting, as the reference documents them.

`validation` keeps any rule it is given; the three known ones (`required`, `pattern`, `max_length`)
must have the right type, since the sandbox enforces them on values.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from shipsync.api.entity_types import CREATABLE_DEFINITION_ENTITIES, definition_entity
from shipsync.values import DATA_TYPES
from shipsync_sandbox.jsonapi_http import ApiProblem, paged, read_document, single, unprocessable
from shipsync_sandbox.routes_read import not_found
from shipsync_sandbox.state import account_of, state_of
from shipsync_sandbox.world import Account, Resource

SLUG = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
EDITABLE = ("display_name", "description", "validation", "default_format", "default_value")


def required_text(attributes: dict[str, Any], name: str) -> str:
    value = attributes.get(name)
    if not isinstance(value, str) or not value.strip():
        raise unprocessable(f"{name} is required", f"/data/attributes/{name}")
    return value.strip()


def _validation(value: Any) -> dict[str, Any]:
    pointer = "/data/attributes/validation"
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise unprocessable("validation must be an object of rules", pointer)
    if "required" in value and not isinstance(value["required"], bool):
        raise unprocessable("required must be true or false", f"{pointer}/required")
    if "pattern" in value and value["pattern"] is not None:
        if not isinstance(value["pattern"], str):
            raise unprocessable("pattern must be a regular expression", f"{pointer}/pattern")
        try:
            re.compile(value["pattern"])
        except re.error as exc:
            raise unprocessable(f"pattern is not a regular expression: {exc}", f"{pointer}/pattern") from None
    max_length = value.get("max_length")
    if max_length is not None and (isinstance(max_length, bool) or not isinstance(max_length, int) or max_length < 1):
        raise unprocessable("max_length must be a positive whole number", f"{pointer}/max_length")
    return dict(value)  # rules beyond the three known ones are kept as given


def _own_definition(request: Request) -> Resource:
    state, account = state_of(request), account_of(request)
    definition_id = request.path_params["id"]
    if definition_id in account.definitions:
        return account.definitions[definition_id]
    if definition_id in state.world.template_definitions:
        raise ApiProblem(403, "Forbidden", "template definitions belong to the service and cannot be changed")
    raise not_found("Couldn't find CustomFieldDefinition")


async def list_definitions(request: Request) -> Response:
    state, account = state_of(request), account_of(request)
    q = request.query_params
    wanted_entity = q.get("filter[entity_type]")
    prefix = (q.get("filter[display_name]") or "").casefold()
    items = [
        d
        for d in [*state.world.template_definitions.values(), *account.definitions.values()]
        if (wanted_entity is None or definition_entity(d["attributes"]["entity_type"]) == definition_entity(wanted_entity))
        and q.get("filter[data_type]") in (None, d["attributes"]["data_type"])
        and (d["attributes"]["display_name"] or "").casefold().startswith(prefix)
    ]
    return paged(request, items)


async def get_definition(request: Request) -> Response:
    definition = state_of(request).world.definition(account_of(request), request.path_params["id"])
    if definition is None:
        raise not_found("Couldn't find CustomFieldDefinition")
    return single(definition, request)


async def create_definition(request: Request) -> Response:
    state, account = state_of(request), account_of(request)
    attributes = (await read_document(request, "custom_field_definition"))["attributes"]
    entity_type = required_text(attributes, "entity_type")
    if entity_type not in CREATABLE_DEFINITION_ENTITIES:
        raise unprocessable(
            f"entity_type must be {' or '.join(CREATABLE_DEFINITION_ENTITIES)} (not {entity_type!r})", "/data/attributes/entity_type"
        )
    slug = required_text(attributes, "api_slug")
    if not SLUG.match(slug):
        raise unprocessable("api_slug must be lowercase letters, digits and _ (starting with a letter)", "/data/attributes/api_slug")
    if state.world.definition_by_slug(account, slug) is not None:
        raise unprocessable("api_slug has already been taken", "/data/attributes/api_slug")
    display_name = required_text(attributes, "display_name")
    data_type = required_text(attributes, "data_type")
    if data_type not in DATA_TYPES:
        raise unprocessable(f"data_type must be one of {', '.join(DATA_TYPES)}", "/data/attributes/data_type")
    if data_type == "reference" and not attributes.get("reference_type"):
        raise unprocessable("reference_type is required when data_type is reference", "/data/attributes/reference_type")
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
            "validation": _validation(attributes.get("validation")),
            "default_format": attributes.get("default_format"),
            "default_value": attributes.get("default_value"),
        },
        "relationships": {"options": {"data": []}},
        "links": {"self": f"/v2/custom_field_definitions/{definition_id}"},
    }
    account.definitions[definition_id] = definition
    account.options[definition_id] = []
    return single(definition, request, status=201)


async def patch_definition(request: Request) -> Response:
    definition = _own_definition(request)
    attributes = (await read_document(request, "custom_field_definition"))["attributes"]
    for name, value in attributes.items():
        pointer = f"/data/attributes/{name}"
        if name not in EDITABLE:
            raise unprocessable(f"{name} cannot change (editable: {', '.join(EDITABLE)})", pointer)
        if name == "display_name" and (not isinstance(value, str) or not value.strip()):
            raise unprocessable("display_name must be a non-empty string", pointer)
        if name in ("description", "default_format") and value is not None and not isinstance(value, str):
            raise unprocessable(f"{name} must be a string or null", pointer)
    if "validation" in attributes:
        attributes["validation"] = _validation(attributes["validation"])
    definition["attributes"] = {**definition["attributes"], **attributes}
    return single(definition, request)


async def delete_definition(request: Request) -> Response:
    definition = _own_definition(request)
    account = account_of(request)
    used = sum(1 for cf in account.custom_fields.values() if cf["relationships"]["definition"]["data"]["id"] == definition["id"])
    if used:
        raise unprocessable(f"{definition['attributes']['api_slug']} still has {used} value(s); delete them first", "/data")
    del account.definitions[definition["id"]]
    account.options.pop(definition["id"], None)
    return Response(status_code=200)


async def list_options(request: Request) -> Response:
    state, account = state_of(request), account_of(request)
    definition_id = request.path_params["id"]
    if state.world.definition(account, definition_id) is None:
        raise not_found("Couldn't find CustomFieldDefinition")
    options = sorted(state.world.options_of(account, definition_id), key=lambda o: (o["attributes"]["position"], o["id"]))
    return paged(request, options)


def _option(account: Account, definition_id: str, option_id: str) -> Resource:
    option = next((o for o in account.options.get(definition_id, []) if o["id"] == option_id), None)
    if option is None:
        raise not_found("Couldn't find CustomFieldOption")
    return option


async def get_option(request: Request) -> Response:
    state, account = state_of(request), account_of(request)
    definition_id, option_id = request.path_params["id"], request.path_params["option_id"]
    option = next((o for o in state.world.options_of(account, definition_id) if o["id"] == option_id), None)
    if option is None:
        raise not_found("Couldn't find CustomFieldOption")
    return single(option, request)


def _position(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise unprocessable("position must be a whole number, 0 or more", "/data/attributes/position")
    return value


async def create_option(request: Request) -> Response:
    definition = _own_definition(request)
    account = account_of(request)
    attributes = (await read_document(request, "custom_field_option"))["attributes"]
    label = required_text(attributes, "label")
    value = required_text(attributes, "value")
    options = account.options.setdefault(definition["id"], [])
    if any(o["attributes"]["value"] == value for o in options):
        raise unprocessable("value has already been taken", "/data/attributes/value")
    position = _position(attributes["position"]) if attributes.get("position") is not None else len(options)
    option_id = str(uuid.uuid4())
    option = {
        "id": option_id,
        "type": "custom_field_option",
        "attributes": {"label": label, "value": value, "position": position},
        "links": {"self": f"/v2/custom_field_definitions/{definition['id']}/options/{option_id}"},
    }
    options.append(option)
    definition["relationships"]["options"]["data"].append({"type": "custom_field_option", "id": option_id})
    return single(option, request, status=201)


async def patch_option(request: Request) -> Response:
    definition = _own_definition(request)
    option = _option(account_of(request), definition["id"], request.path_params["option_id"])
    attributes = (await read_document(request, "custom_field_option"))["attributes"]
    for name in attributes:
        if name not in ("label", "position"):
            raise unprocessable(f"{name} cannot change (an option's label and position can)", f"/data/attributes/{name}")
    if "label" in attributes:
        option["attributes"]["label"] = required_text(attributes, "label")
    if "position" in attributes:
        option["attributes"]["position"] = _position(attributes["position"])
    return single(option, request)


async def delete_option(request: Request) -> Response:
    definition = _own_definition(request)
    account = account_of(request)
    option = _option(account, definition["id"], request.path_params["option_id"])
    account.options[definition["id"]].remove(option)
    refs = definition["relationships"]["options"]["data"]
    refs[:] = [r for r in refs if r["id"] != option["id"]]
    return Response(status_code=200)


DEFINITION_ROUTES = [
    Route("/v2/custom_field_definitions", list_definitions, methods=["GET"]),
    Route("/v2/custom_field_definitions", create_definition, methods=["POST"]),
    Route("/v2/custom_field_definitions/{id}", get_definition, methods=["GET"]),
    Route("/v2/custom_field_definitions/{id}", patch_definition, methods=["PATCH"]),
    Route("/v2/custom_field_definitions/{id}", delete_definition, methods=["DELETE"]),
    Route("/v2/custom_field_definitions/{id}/options", list_options, methods=["GET"]),
    Route("/v2/custom_field_definitions/{id}/options", create_option, methods=["POST"]),
    Route("/v2/custom_field_definitions/{id}/options/{option_id}", get_option, methods=["GET"]),
    Route("/v2/custom_field_definitions/{id}/options/{option_id}", patch_option, methods=["PATCH"]),
    Route("/v2/custom_field_definitions/{id}/options/{option_id}", delete_option, methods=["DELETE"]),
]
