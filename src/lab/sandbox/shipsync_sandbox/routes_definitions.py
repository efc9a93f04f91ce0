"""Sandbox custom field definitions and their options: listing (display_name is a prefix), reading,
creating, editing (PATCH) and deleting, as the reference documents them. Every definition of the
account may change or go, the service's templates too (the reference sets them no rule of their
own); deleting a definition deletes its values.

A create checks exactly what the reference states: `entity_type` (`Shipment` or `Container`, as the
service takes today), `api_slug` (unique in the account, with the service's templates; no format
is stated, so `PO-Number`, `1st_field` and a 65-character slug are taken), `display_name`,
`data_type` (one of the eight the service's reference enumerates), `reference_type` when the data
type is `reference`, and the types of the optional members. `validation` is an object whose rules
are kept as given (their structure is not stated): the known ones are enforced on values where
their value is usable (`value_rules.py`), the others kept. An enum definition may have no options.
"""

from __future__ import annotations

import uuid
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from shipsync_sandbox.entities import CREATABLE_ENTITY_TYPES, definition_type_named
from shipsync_sandbox.jsonapi_http import paged, read_document, single, unprocessable, whole
from shipsync_sandbox.listing_order import in_order
from shipsync_sandbox.resources import Resource
from shipsync_sandbox.routes_read import listing_order, not_found
from shipsync_sandbox.state import account_of
from shipsync_sandbox.value_rules import DATA_TYPES, default_value_refusal
from shipsync_sandbox.world import Account

EDITABLE = ("display_name", "description", "validation", "default_format", "default_value")
OPTIONAL_TEXT = ("description", "reference_type", "default_format")


def required_text(attributes: dict[str, Any], name: str) -> str:
    value = attributes.get(name)
    if not isinstance(value, str) or not value.strip():
        raise unprocessable(f"{name} is required", f"/data/attributes/{name}")
    return value.strip()


def _validation(value: Any) -> dict[str, Any]:
    """The rules as given (an object); their structure is not stated, so none is refused."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise unprocessable("validation must be an object of rules", "/data/attributes/validation")
    return dict(value)


def _optional_text(attributes: dict[str, Any], name: str) -> None:
    value = attributes.get(name)
    if value is not None and not isinstance(value, str):
        raise unprocessable(f"{name} must be a string or null", f"/data/attributes/{name}")


def _default_value(value: Any, definition: dict[str, Any]) -> None:
    """A default value is a value of the definition's data type (the reference: its "type depends
    on definition"), or null."""
    if (refused := default_value_refusal(value, definition)) is not None:
        raise unprocessable(f"default_value {refused}", "/data/attributes/default_value")


def _definition(request: Request) -> Resource:
    definition = account_of(request).definitions.get(request.path_params["id"])
    if definition is None:
        raise not_found("Couldn't find CustomFieldDefinition")
    return definition


async def list_definitions(request: Request) -> Response:
    account = account_of(request)
    q = request.query_params
    wanted_entity = q.get("filter[entity_type]")
    prefix = (q.get("filter[display_name]") or "").casefold()
    items = [
        d
        for d in account.definitions.values()
        if (wanted_entity is None or d["attributes"]["entity_type"] == definition_type_named(wanted_entity))
        and q.get("filter[data_type]") in (None, d["attributes"]["data_type"])
        and (d["attributes"]["display_name"] or "").casefold().startswith(prefix)
    ]
    return paged(request, in_order(items, listing_order(request)))


async def get_definition(request: Request) -> Response:
    return single(_definition(request), request)


async def create_definition(request: Request) -> Response:
    account = account_of(request)
    attributes = (await read_document(request, "custom_field_definition"))["attributes"]
    entity_type = required_text(attributes, "entity_type")
    if entity_type not in CREATABLE_ENTITY_TYPES:
        raise unprocessable(
            f"entity_type must be {' or '.join(CREATABLE_ENTITY_TYPES)} (not {entity_type!r})", "/data/attributes/entity_type"
        )
    slug = required_text(attributes, "api_slug")
    if any(d["attributes"]["api_slug"] == slug for d in account.definitions.values()):
        raise unprocessable("api_slug has already been taken", "/data/attributes/api_slug")
    display_name = required_text(attributes, "display_name")
    data_type = required_text(attributes, "data_type")
    if data_type not in DATA_TYPES:
        raise unprocessable(f"data_type must be one of {', '.join(DATA_TYPES)}", "/data/attributes/data_type")
    for name in OPTIONAL_TEXT:
        _optional_text(attributes, name)
    if data_type == "reference" and not attributes.get("reference_type"):
        raise unprocessable("reference_type is required when data_type is reference", "/data/attributes/reference_type")
    _default_value(attributes.get("default_value"), attributes)
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
    definition = _definition(request)
    attributes = (await read_document(request, "custom_field_definition"))["attributes"]
    for name, value in attributes.items():
        pointer = f"/data/attributes/{name}"
        if name not in EDITABLE:
            raise unprocessable(f"{name} cannot change (editable: {', '.join(EDITABLE)})", pointer)
        if name == "display_name" and (not isinstance(value, str) or not value.strip()):
            raise unprocessable("display_name must be a non-empty string", pointer)
        if name in OPTIONAL_TEXT:
            _optional_text(attributes, name)
    _default_value(attributes.get("default_value"), {**definition["attributes"], **attributes})
    if "validation" in attributes:
        attributes["validation"] = _validation(attributes["validation"])
    definition["attributes"] = {**definition["attributes"], **attributes}
    return single(definition, request)


async def delete_definition(request: Request) -> Response:
    definition = _definition(request)
    account = account_of(request)
    for value in account.custom_fields.of_definition(definition["id"]):
        del account.custom_fields[value["id"]]
    del account.definitions[definition["id"]]
    account.options.pop(definition["id"], None)
    return Response(status_code=200)


async def list_options(request: Request) -> Response:
    definition = _definition(request)
    options = account_of(request).options.get(definition["id"], [])
    return whole(request, in_order(options, listing_order(request)))  # the operation declares no paging


def _option(account: Account, definition_id: str, option_id: str) -> Resource:
    option = next((o for o in account.options.get(definition_id, []) if o["id"] == option_id), None)
    if option is None:
        raise not_found("Couldn't find CustomFieldOption")
    return option


async def get_option(request: Request) -> Response:
    return single(_option(account_of(request), request.path_params["id"], request.path_params["option_id"]), request)


def _position(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise unprocessable("position must be a whole number, 0 or more", "/data/attributes/position")
    return value


async def create_option(request: Request) -> Response:
    definition = _definition(request)
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
    definition = _definition(request)
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
    definition = _definition(request)
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
