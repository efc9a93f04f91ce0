"""Sandbox read endpoints: documents (one, and the listing extension), metro areas, document schemas,
and what every read shares: finding a record, `include`, and listing in the configured order.

A refusal is answered only where the reference declares one: an unknown `include` or `sort` of the
documents is a 400 (their operations declare it); elsewhere an unknown `include` adds nothing. A
record the path's id does not name is a 404 with the reference's error document everywhere (the
contradictions list says where the reference declares none)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from shipsync_sandbox.document_store import DocumentStore
from shipsync_sandbox.jsonapi_http import ApiProblem, paged, single
from shipsync_sandbox.listing_order import ListingOrder, in_order
from shipsync_sandbox.related import related_of
from shipsync_sandbox.resources import Resource
from shipsync_sandbox.state import account_of, state_of
from shipsync_sandbox.world import Account

View = Callable[[Account, Resource], Resource]  # a record as served at the account's instant

INCLUDE_ALIASES = {"current_extraction": "last_document_representation"}
INCLUDABLE = ("shipments", "cargos", "account", "user", "last_document_representation", "email_submission")
DOCUMENT_SORTS = ("created_at", "document_type", "added_by")


def not_found(detail: str) -> ApiProblem:
    return ApiProblem(404, "Not Found", detail)


def found(resources: Mapping[str, dict[str, Any]], key: str, name: str) -> dict[str, Any]:
    """The resource stored under `key`, or the service's 404 (`Couldn't find <Name>`)."""
    resource = resources.get(key)
    if resource is None:
        raise not_found(f"Couldn't find {name}")
    return resource


def includes_of(request: Request, includable: tuple[str, ...] = INCLUDABLE, *, refuse_unknown: bool = False) -> list[str]:
    """The relationships `include` names that this operation can include; another name is a 400
    where the operation declares one (`refuse_unknown`), else it adds nothing."""
    raw = request.query_params.get("include")
    if not raw:
        return []
    names = []
    for item in (part.strip() for part in raw.split(",") if part.strip()):
        name = INCLUDE_ALIASES.get(item, item)
        if name in includable:
            names.append(name)
        elif refuse_unknown:
            raise ApiProblem(400, "Bad Request", f"{item} is not an includable relationship", parameter="include")
    return names


def listing_order(request: Request) -> ListingOrder:
    return state_of(request).options.listing_order


def listed(request: Request, items: list[Resource], includes: list[str], answer: str, present: View) -> Response:
    """A page of `items` as the operation `answer` (a key of `related.CARRIED`) serves them, each
    `present`ed, with the related records `includes` names."""
    account = account_of(request)
    return paged(
        request,
        items,
        default_size=30,
        included_for=lambda page: related_of(account, page, includes, answer) if includes else [],
        present=lambda item: present(account, item),
    )


def one(request: Request, type_: str, name: str, includable: tuple[str, ...], present: View) -> Response:
    """The record of `type_` the path's id names (`Couldn't find <name>` if none), `present`ed, with
    the related records its `include` asks for (the answer named `type_` in `related.CARRIED`)."""
    account = account_of(request)
    resource = present(account, found(account.by_type.get(type_, {}), request.path_params["id"], name))
    return single(resource, request, included=related_of(account, [resource], includes_of(request, includable), type_))


async def get_document(request: Request) -> Response:
    account = account_of(request)
    document = found(account.documents, request.path_params["id"], "Document")
    included = related_of(account, [document], includes_of(request, refuse_unknown=True), "document")
    return single(document, request, included=included)


def _references(account: Account, document: dict[str, Any]) -> set[str]:
    """Numbers a document can be found by: its shipments' bills of lading and references, its containers."""
    found: set[str] = set()
    for ref in document["relationships"]["shipments"]["data"]:
        attributes = (account.resource("shipment", ref["id"]) or {}).get("attributes", {})
        found.update([attributes.get("bill_of_lading_number") or "", *(attributes.get("ref_numbers") or [])])
    for ref in document["relationships"]["cargos"]["data"]:
        found.add((account.resource("container", ref["id"]) or {}).get("attributes", {}).get("number") or "")
    return {n.casefold() for n in found if n}


def _added_by(account: Account, document: dict[str, Any]) -> str:
    user = account.resource("user", document["relationships"]["user"]["data"]["id"]) or {"attributes": {}}
    return f"{user['attributes'].get('first_name', '')} {user['attributes'].get('last_name', '')}".strip()


async def list_documents(request: Request) -> Response:
    account = account_of(request)
    includes = includes_of(request, refuse_unknown=True)
    q = request.query_params
    sort = q.get("sort")
    key = (sort or "created_at").lstrip("-")
    if key not in DOCUMENT_SORTS:
        raise ApiProblem(400, "Bad Request", f"cannot sort by {sort} (use {', '.join(DOCUMENT_SORTS)})", parameter="sort")
    filtered = any(q.get(f"filter[{name}]") for name in ("document_types", "filename", "reference"))
    store = account.documents
    if key == "created_at" and not filtered and isinstance(store, DocumentStore):
        # Documents are numbered in creation order: only the page answered with is made. With no
        # `sort` the listing's own order (the reference states none: newest first by default).
        order: ListingOrder = listing_order(request) if sort is None else "newest" if sort.startswith("-") else "oldest"
        return paged(request, store.in_order(order), included_for=lambda page: related_of(account, page, includes, "documents"))
    documents = list(store.values())
    if types := q.get("filter[document_types]"):
        wanted = set(types.split(","))
        documents = [d for d in documents if d["attributes"]["document_type"] in wanted]
    if name := q.get("filter[filename]"):
        documents = [d for d in documents if name.lower() in (d["attributes"]["file_name"] or "").lower()]
    if reference := q.get("filter[reference]"):
        documents = [d for d in documents if reference.strip().casefold() in _references(account, d)]
    if sort is None:
        documents = in_order(documents, listing_order(request), created=lambda d: d["attributes"]["created_at"])
    elif key == "added_by":
        documents.sort(key=lambda d: (_added_by(account, d), d["id"]), reverse=sort.startswith("-"))
    else:
        documents.sort(key=lambda d: (d["attributes"][key], d["id"]), reverse=sort.startswith("-"))
    return paged(request, documents, included_for=lambda page: related_of(account, page, includes, "documents"))


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


READ_ROUTES = [
    Route("/v2/documents", list_documents, methods=["GET"]),
    Route("/v2/documents/{id}", get_document, methods=["GET"]),
    Route("/v2/metro_areas/{id}", get_metro_area, methods=["GET"]),
    Route("/v2/document_schemas/{id}", get_document_schema, methods=["GET"]),
]
