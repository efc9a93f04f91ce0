"""Sandbox custom field values on shipments, containers and tracking requests: `POST /custom_fields`
(the spec's: a shipment or a container only), the listing and by-id extensions, and the per-entity
routes `/{shipments,containers,tracking_requests}/{id}/custom_fields[/{api_slug}]` (a tracking
request's values are created on its own route).

Values are checked against their definition by `value_rules.py` (422 at `/data/attributes/value`);
a second value for the same entity and slug is refused (422 at `/data/attributes/api_slug`).
Deleting a value by its slug answers 204, by its id 200, as the reference declares each.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from shipsync_sandbox.custom_field_store import custom_field_resource, shown_as
from shipsync_sandbox.entities import ENTITY_OF_ROUTE, GENERIC_ROUTE_ENTITIES, value_type_of
from shipsync_sandbox.jsonapi_http import paged, read_document, single, to_one, unprocessable, whole
from shipsync_sandbox.listing_order import in_order
from shipsync_sandbox.resources import Resource
from shipsync_sandbox.routes_definitions import required_text
from shipsync_sandbox.routes_read import found, listing_order, not_found
from shipsync_sandbox.state import account_of, state_of
from shipsync_sandbox.value_rules import ValueRefused
from shipsync_sandbox.world import Account, World

ENTITY_TYPE_NAMES = {"shipment": "shipment", "container": "container", "cargo": "container", "tracking_request": "tracking_request"}


def _checked(world: World, account: Account, definition: Resource, value: Any) -> str:
    try:
        return shown_as(world, account, definition, value)
    except ValueRefused as refused:
        raise unprocessable(f"value {refused}", "/data/attributes/value") from None


def _entity_of(cf: Resource) -> tuple[str, str]:
    data = cf["relationships"]["entity"]["data"]
    return data["type"], data["id"]


def _create(request: Request, entity: tuple[str, str], attributes: dict[str, Any]) -> Resource:
    state, account = state_of(request), account_of(request)
    slug = required_text(attributes, "api_slug")
    if "value" not in attributes:
        raise unprocessable("value is required", "/data/attributes/value")
    if account.entity(*entity) is None:
        raise unprocessable(f"{entity[0]} {entity[1]} does not exist", "/data/relationships/entity")
    definition = state.world.definition_by_slug(account, slug)
    if definition is None:
        raise unprocessable(f"no custom field definition with api_slug {slug!r}", "/data/attributes/api_slug")
    if value_type_of(definition["attributes"]["entity_type"]) != entity[0]:
        raise unprocessable(f"{slug} applies to {definition['attributes']['entity_type']}, not {entity[0]}", "/data/relationships/entity")
    if account.custom_fields.on(entity, slug) is not None:
        raise unprocessable(f"{slug} already has a value on this {entity[0]}", "/data/attributes/api_slug")
    display = _checked(state.world, account, definition, attributes["value"])
    custom_field = custom_field_resource(definition, entity, attributes["value"], display)
    account.custom_fields[custom_field["id"]] = custom_field
    return custom_field


def _update(request: Request, custom_field: Resource, attributes: dict[str, Any]) -> Resource:
    state, account = state_of(request), account_of(request)
    if (
        set(attributes) - {"value", "api_slug"}
        or attributes.get("api_slug", custom_field["attributes"]["api_slug"]) != (custom_field["attributes"]["api_slug"])
    ):
        raise unprocessable("only value can be changed", "/data/attributes")
    if "value" not in attributes:
        raise unprocessable("value is required", "/data/attributes/value")
    definition = state.world.definition(account, custom_field["relationships"]["definition"]["data"]["id"])
    if definition is None:
        raise unprocessable("the value's definition no longer exists", "/data/attributes/api_slug")
    display = _checked(state.world, account, definition, attributes["value"])
    custom_field["attributes"] = {**custom_field["attributes"], "value": attributes["value"], "display_value": display}
    return custom_field


async def create_custom_field(request: Request) -> Response:
    data = await read_document(request, "custom_field")
    entity = to_one(data, "entity")
    if entity is None or entity["type"] not in GENERIC_ROUTE_ENTITIES:
        where = " (a tracking request's values: POST /tracking_requests/{id}/custom_fields)" if entity else ""
        raise unprocessable(
            f"entity must be {{data: {{type: {'|'.join(GENERIC_ROUTE_ENTITIES)}, id}}}}{where}", "/data/relationships/entity"
        )
    return single(_create(request, (entity["type"], entity["id"]), data["attributes"]), request, status=201)


async def list_custom_fields(request: Request) -> Response:
    q = request.query_params
    entity_type = q.get("filter[entity_type]")
    wanted_type = ENTITY_TYPE_NAMES.get(entity_type.lower(), entity_type) if entity_type else None
    values = account_of(request).custom_fields
    definition_id = q.get("filter[definition_id]")
    items = [
        cf
        for cf in (values.of_definition(definition_id) if definition_id else values.values())
        if wanted_type in (None, _entity_of(cf)[0])
        and q.get("filter[entity_id]") in (None, _entity_of(cf)[1])
        and q.get("filter[definition_id]") in (None, cf["relationships"]["definition"]["data"]["id"])
    ]
    return paged(request, in_order(items, listing_order(request)))


def _by_id(request: Request) -> Resource:
    return found(account_of(request).custom_fields, request.path_params["id"], "CustomField")


async def get_custom_field(request: Request) -> Response:
    return single(_by_id(request), request)


async def patch_custom_field(request: Request) -> Response:
    custom_field = _by_id(request)
    return single(_update(request, custom_field, (await read_document(request, "custom_field"))["attributes"]), request)


async def delete_custom_field(request: Request) -> Response:
    del account_of(request).custom_fields[_by_id(request)["id"]]
    return Response(status_code=200)


def _path_entity(request: Request) -> tuple[str, str]:
    route = request.url.path.split("/")[2]  # /v2/<route>/<id>/custom_fields[/<slug>]
    entity = (ENTITY_OF_ROUTE[route], request.path_params["id"])
    if account_of(request).entity(*entity) is None:
        raise not_found(f"Couldn't find {entity[0].replace('_', ' ').title().replace(' ', '')}")
    return entity


def _by_slug(request: Request) -> Resource:
    entity, slug = _path_entity(request), request.path_params["slug"]
    found = account_of(request).custom_fields.on(entity, slug)
    if found is None:
        raise not_found(f"Couldn't find CustomField {slug}")
    return found


async def list_entity_fields(request: Request) -> Response:
    entity = _path_entity(request)
    return whole(request, in_order(account_of(request).custom_fields.of_entity(entity), listing_order(request)))  # no paging declared


async def create_entity_field(request: Request) -> Response:
    entity = _path_entity(request)
    data = await read_document(request, "custom_field")
    return single(_create(request, entity, data["attributes"]), request, status=201)


async def patch_entity_field(request: Request) -> Response:
    custom_field = _by_slug(request)
    return single(_update(request, custom_field, (await read_document(request, "custom_field"))["attributes"]), request)


async def delete_entity_field(request: Request) -> Response:
    del account_of(request).custom_fields[_by_slug(request)["id"]]
    return Response(status_code=204)


_ENTITY_ROUTE = "/v2/{route}/{id}/custom_fields"
CUSTOM_FIELD_ROUTES = [
    Route("/v2/custom_fields", list_custom_fields, methods=["GET"]),
    Route("/v2/custom_fields", create_custom_field, methods=["POST"]),
    Route("/v2/custom_fields/{id}", get_custom_field, methods=["GET"]),
    Route("/v2/custom_fields/{id}", patch_custom_field, methods=["PATCH"]),
    Route("/v2/custom_fields/{id}", delete_custom_field, methods=["DELETE"]),
    *(
        Route(path.replace("{route}", route), endpoint, methods=[method])
        for route in ENTITY_OF_ROUTE
        for path, endpoint, method in (
            (_ENTITY_ROUTE, list_entity_fields, "GET"),
            (_ENTITY_ROUTE, create_entity_field, "POST"),
            (_ENTITY_ROUTE + "/{slug}", patch_entity_field, "PATCH"),
            (_ENTITY_ROUTE + "/{slug}", delete_entity_field, "DELETE"),
        )
    ),
]
