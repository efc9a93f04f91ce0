"""Sandbox read endpoints: documents, metro areas, document schemas, tracking requests, listings."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from shipsync.sandbox.jsonapi_http import ApiProblem, paged, single
from shipsync.sandbox.state import account_of, state_of
from shipsync.sandbox.world import Account

INCLUDE_ALIASES = {"current_extraction": "last_document_representation"}
INCLUDABLE = ("shipments", "cargos", "account", "user", "last_document_representation", "email_submission")


def not_found(detail: str) -> ApiProblem:
    return ApiProblem(404, "Not Found", detail)


def _includes(request: Request) -> list[str]:
    raw = request.query_params.get("include")
    if not raw:
        return []
    names = []
    for item in (part.strip() for part in raw.split(",") if part.strip()):
        name = INCLUDE_ALIASES.get(item, item)
        if name not in INCLUDABLE:
            raise ApiProblem(400, "Bad Request", f"{item} is not an includable relationship", parameter="include")
        names.append(name)
    return names


def _related_of(account: Account, documents: list[dict[str, Any]], includes: list[str]) -> list[dict[str, Any]]:
    seen: dict[tuple[str, str], dict[str, Any]] = {}
    for document in documents:
        for name in includes:
            data = document["relationships"][name]["data"]
            for ref in data if isinstance(data, list) else [data]:
                key = (ref["type"], ref["id"])
                if key not in seen and (resource := account.resource(*key)) is not None:
                    seen[key] = resource
    return list(seen.values())


async def get_document(request: Request) -> Response:
    account = account_of(request)
    document = account.documents.get(request.path_params["id"])
    if document is None:
        raise not_found("Couldn't find Document")
    includes = _includes(request)
    return single(document, request, included=_related_of(account, [document], includes))


async def list_documents(request: Request) -> Response:
    account = account_of(request)
    includes = _includes(request)
    documents = list(account.documents.values())
    if types := request.query_params.get("filter[document_types]"):
        wanted = set(types.split(","))
        documents = [d for d in documents if d["attributes"]["document_type"] in wanted]
    if name := request.query_params.get("filter[filename]"):
        documents = [d for d in documents if name.lower() in (d["attributes"]["file_name"] or "").lower()]
    sort = request.query_params.get("sort", "created_at")
    key = sort.lstrip("-")
    if key not in ("created_at", "document_type"):
        raise ApiProblem(400, "Bad Request", f"cannot sort by {sort}", parameter="sort")
    documents.sort(key=lambda d: (d["attributes"][key], d["id"]), reverse=sort.startswith("-"))
    return paged(request, documents, included_for=lambda page: _related_of(account, page, includes))


async def get_metro_area(request: Request) -> Response:
    world = state_of(request).world
    key = request.path_params["id"]
    metro = world.metro_by_code.get(key.upper()) or world.metro_areas.get(key)
    if metro is None:
        raise not_found("Couldn't find MetroArea")
    return single(metro, request)


async def get_document_schema(request: Request) -> Response:
    schema_id = request.path_params["id"]
    schema = state_of(request).world.document_schemas.get(schema_id)
    if schema is None:
        raise not_found(f"Couldn't find DocumentSchema with 'id'={schema_id}")
    return single(schema, request)


def _in_range(value: str, start: str | None, end: str | None) -> bool:
    return (start is None or value >= start) and (end is None or value <= end)


async def list_tracking_requests(request: Request) -> Response:
    q = request.query_params
    items = [
        tr
        for tr in account_of(request).tracking_requests.values()
        if all(
            (q.get(f"filter[{name}]") is None or tr["attributes"][name] == q.get(f"filter[{name}]"))
            for name in ("request_number", "status", "scac")
        )
        and _in_range(tr["attributes"]["updated_at"], q.get("filter[updated_at][start]"), q.get("filter[updated_at][end]"))
        and _in_range(tr["attributes"]["created_at"], q.get("filter[created_at][start]"), q.get("filter[created_at][end]"))
    ]
    items.sort(key=lambda tr: (tr["attributes"]["updated_at"], tr["id"]))
    return paged(request, items)


async def get_tracking_request(request: Request) -> Response:
    tr = account_of(request).tracking_requests.get(request.path_params["id"])
    if tr is None:
        raise not_found("Couldn't find TrackingRequest")
    return single(tr, request)


async def list_definitions(request: Request) -> Response:
    state, account = state_of(request), account_of(request)
    q = request.query_params
    items = [
        d
        for d in [*state.world.template_definitions.values(), *account.definitions.values()]
        if all(
            q.get(f"filter[{name}]") is None or d["attributes"][name] == q.get(f"filter[{name}]")
            for name in ("entity_type", "data_type", "display_name")
        )
    ]
    return paged(request, items)


async def get_definition(request: Request) -> Response:
    definition = state_of(request).world.definition(account_of(request), request.path_params["id"])
    if definition is None:
        raise not_found("Couldn't find CustomFieldDefinition")
    return single(definition, request)


async def list_options(request: Request) -> Response:
    state, account = state_of(request), account_of(request)
    definition_id = request.path_params["id"]
    if state.world.definition(account, definition_id) is None:
        raise not_found("Couldn't find CustomFieldDefinition")
    return paged(request, state.world.options_of(account, definition_id))


ENTITY_TYPE_NAMES = {"shipment": "shipment", "container": "container", "cargo": "container"}


async def list_custom_fields(request: Request) -> Response:
    q = request.query_params
    entity_type = q.get("filter[entity_type]")
    wanted_type = ENTITY_TYPE_NAMES.get(entity_type.lower(), entity_type) if entity_type else None
    items = [
        cf
        for cf in account_of(request).custom_fields.values()
        if (wanted_type is None or cf["relationships"]["entity"]["data"]["type"] == wanted_type)
        and (q.get("filter[entity_id]") is None or cf["relationships"]["entity"]["data"]["id"] == q.get("filter[entity_id]"))
        and (q.get("filter[definition_id]") is None or cf["relationships"]["definition"]["data"]["id"] == q.get("filter[definition_id]"))
    ]
    return paged(request, items)


async def get_custom_field(request: Request) -> Response:
    cf = account_of(request).custom_fields.get(request.path_params["id"])
    if cf is None:
        raise not_found("Couldn't find CustomField")
    return single(cf, request)


async def list_webhooks(request: Request) -> Response:
    return paged(request, [_public_webhook(w) for w in account_of(request).webhooks.values()])


def _public_webhook(webhook: dict[str, Any]) -> dict[str, Any]:
    return {**webhook, "attributes": {k: v for k, v in webhook["attributes"].items() if k != "secret"}}


READ_ROUTES = [
    Route("/v2/documents", list_documents, methods=["GET"]),
    Route("/v2/documents/{id}", get_document, methods=["GET"]),
    Route("/v2/metro_areas/{id}", get_metro_area, methods=["GET"]),
    Route("/v2/document_schemas/{id}", get_document_schema, methods=["GET"]),
    Route("/v2/tracking_requests", list_tracking_requests, methods=["GET"]),
    Route("/v2/tracking_requests/{id}", get_tracking_request, methods=["GET"]),
    Route("/v2/custom_field_definitions", list_definitions, methods=["GET"]),
    Route("/v2/custom_field_definitions/{id}", get_definition, methods=["GET"]),
    Route("/v2/custom_field_definitions/{id}/options", list_options, methods=["GET"]),
    Route("/v2/custom_fields", list_custom_fields, methods=["GET"]),
    Route("/v2/custom_fields/{id}", get_custom_field, methods=["GET"]),
    Route("/v2/webhooks", list_webhooks, methods=["GET"]),
]
