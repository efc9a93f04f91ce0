"""HTTP helpers of the sandbox: JSON:API responses, error bodies, paging links, request bodies."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response

MEDIA_TYPE = "application/json"
MAX_PAGE_SIZE = 100


class ApiProblem(Exception):
    """Raised by a handler to answer with an `errors` body."""

    def __init__(
        self,
        status: int,
        title: str,
        detail: str | None = None,
        *,
        pointer: str | None = None,
        parameter: str | None = None,
        headers: dict[str, str] | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(detail or title)
        self.status = status
        self.title = title
        self.detail = detail
        self.pointer = pointer
        self.parameter = parameter
        self.headers = headers or {}
        self.code = code

    def body(self) -> dict[str, Any]:
        error: dict[str, Any] = {"status": str(self.status), "title": self.title, "detail": self.detail, "code": self.code}
        if self.pointer or self.parameter:
            error["source"] = {"pointer": self.pointer, "parameter": self.parameter}
        return {"errors": [error]}


def unprocessable(detail: str, pointer: str) -> ApiProblem:
    return ApiProblem(422, "Unprocessable Entity", detail, pointer=pointer)


def json_response(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(json.dumps(body, separators=(",", ":")).encode(), status, headers, MEDIA_TYPE)


def problem_response(problem: ApiProblem) -> Response:
    return json_response(problem.body(), problem.status, problem.headers)


def base_url(request: Request) -> str:
    return f"{request.url.scheme}://{request.url.netloc}"


def render(resource: dict[str, Any], base: str) -> dict[str, Any]:
    """A stored resource with absolute links (stored links are paths)."""
    links = resource.get("links")
    if not links:
        return resource
    return {**resource, "links": {k: (base + v if v.startswith("/") else v) for k, v in links.items()}}


def single(resource: dict[str, Any], request: Request, status: int = 200, included: Sequence[dict[str, Any]] = ()) -> Response:
    base = base_url(request)
    body: dict[str, Any] = {"data": render(resource, base), "links": {"self": str(request.url)}}
    if included:
        body["included"] = [render(r, base) for r in included]
    return json_response(body, status)


def _page_param(request: Request, name: str, default: int) -> int:
    """A paging parameter as a whole number of 1 or more; anything else is the default (the
    reference declares no answer that refuses one)."""
    raw = request.query_params.get(name)
    return int(raw) if raw is not None and raw.isdigit() and int(raw) >= 1 else default


def paged(
    request: Request,
    items: Sequence[Any],
    *,
    default_size: int = 25,
    included_for: Any = None,
    present: Any = None,
) -> Response:
    """One page of `items` with self/first/prev/next/last links and a total in `meta`.

    `present` turns each item of the page into what is served (so a listing filters and sorts stored
    resources and renders only the page it answers with)."""
    size = min(_page_param(request, "page[size]", default_size), MAX_PAGE_SIZE)
    number = _page_param(request, "page[number]", 1)
    total = len(items)
    last = max(1, -(-total // size))
    page_items = items[(number - 1) * size : number * size]
    if present is not None:
        page_items = [present(item) for item in page_items]
    base = base_url(request)
    query = {k: v for k, v in request.query_params.items() if k not in ("page[number]", "page[size]")}

    def link(n: int) -> str:
        return f"{base}{request.url.path}?{urlencode({**query, 'page[number]': n, 'page[size]': size})}"

    links = {"self": link(number), "first": link(1), "last": link(last)}
    if number > 1:
        links["prev"] = link(min(number - 1, last))
    if number < last:
        links["next"] = link(number + 1)
    body: dict[str, Any] = {
        "data": [render(r, base) for r in page_items],
        "links": links,
        "meta": {"size": size, "total": total},  # the service's paging meta: page size and item count
    }
    if included_for is not None:
        body["included"] = [render(r, base) for r in included_for(page_items)]
    return json_response(body)


def whole(request: Request, items: Sequence[dict[str, Any]], included: Sequence[dict[str, Any]] = ()) -> Response:
    """Every item in one answer, for a listing whose operation declares no paging: `links.self`,
    and `meta` with the count (paging parameters sent anyway are not read)."""
    base = base_url(request)
    body: dict[str, Any] = {"data": [render(r, base) for r in items], "links": {"self": str(request.url)}}
    body["meta"] = {"size": len(items), "total": len(items)}
    if included:
        body["included"] = [render(r, base) for r in included]
    return json_response(body)


def _is_identifier(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("type"), str) and isinstance(value.get("id"), str)


def _check_relationships(relationships: Any) -> None:
    if not isinstance(relationships, dict):
        raise unprocessable("relationships must be an object", "/data/relationships")
    for name, relationship in relationships.items():
        pointer = f"/data/relationships/{name}"
        if not isinstance(relationship, dict) or "data" not in relationship:
            raise unprocessable(f"{name} must be {{data: {{type, id}}}}", pointer)
        data = relationship["data"]
        if data is None or _is_identifier(data):
            continue
        if isinstance(data, list) and all(_is_identifier(item) for item in data):
            continue
        raise unprocessable(f"{name}.data must be null, {{type, id}} or a list of them", f"{pointer}/data")


async def read_document(request: Request, type_: str, *, type_required: bool = True) -> dict[str, Any]:
    """The `data` member of a create/update body, checked for shape: any malformed body is a 422.
    `type` must name the resource, or may be left out where the operation's body does not require it."""
    raw = await request.body()
    try:
        body = json.loads(raw) if raw else None
    except (ValueError, RecursionError):
        raise ApiProblem(400, "Bad Request", "request body is not valid JSON", pointer="") from None
    if not isinstance(body, dict) or not isinstance(body.get("data"), dict):
        raise unprocessable("request body must be {data: {type, attributes}}", "/data")
    data = body["data"]
    if data.get("type", None if type_required else type_) != type_:
        raise unprocessable(f"type must be {type_!r}", "/data/type")
    if "id" in data and not isinstance(data["id"], str):
        raise unprocessable("id must be a string", "/data/id")
    if not isinstance(data.get("attributes", {}), dict):
        raise unprocessable("attributes must be an object", "/data/attributes")
    if "relationships" in data:
        _check_relationships(data["relationships"])
    data.setdefault("attributes", {})
    data.setdefault("relationships", {})
    checked: dict[str, Any] = data
    return checked


def to_one(data: dict[str, Any], name: str) -> dict[str, Any] | None:
    """A checked body's to-one relationship `{type, id}` (None when absent or null); a list is a 422."""
    relationship = data["relationships"].get(name)
    if relationship is None or relationship["data"] is None:
        return None
    target: Any = relationship["data"]
    if isinstance(target, list):
        raise unprocessable(f"{name} is a to-one relationship: data must be {{type, id}}, not a list", f"/data/relationships/{name}/data")
    checked: dict[str, Any] = target
    return checked
