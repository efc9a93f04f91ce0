"""Documents (beta): one by id with `include`, and the list extension (`GET /documents`)."""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import quote

from shipsync.api.document_models import Document, DocumentWithIncluded
from shipsync.api.jsonapi import Page, Pages
from shipsync.api.models import Included
from shipsync.api.transport import Transport

# Every related resource the spec lets `include` name (`current_extraction` is an alias).
ALL_INCLUDES = ("shipments", "cargos", "account", "user", "last_document_representation", "email_submission")
ALLOWED_INCLUDES = frozenset(ALL_INCLUDES) | {"current_extraction"}


def include_param(include: Iterable[str]) -> str:
    items = list(include)
    unknown = [i for i in items if i not in ALLOWED_INCLUDES]
    if unknown:
        raise ValueError(f"unknown include item(s) {unknown}; allowed: {sorted(ALLOWED_INCLUDES)}")
    return ",".join(items)


def document_from_page(page: Page) -> DocumentWithIncluded:
    return DocumentWithIncluded(
        document=Document.from_resource(page.data[0]),
        included=[Included.from_resource(r) for r in page.included],
    )


class Documents:
    def __init__(self, transport: Transport) -> None:
        self._t = transport

    async def get_page(self, document_id: str, include: Iterable[str] = ALL_INCLUDES) -> Page:
        """The raw response for one document (what loaders normalize)."""
        params = {"include": include_param(include)} if include else None
        return await self._t.get_page(f"documents/{quote(document_id, safe='')}", params)

    async def get(self, document_id: str, include: Iterable[str] = ALL_INCLUDES) -> DocumentWithIncluded:
        return document_from_page(await self.get_page(document_id, include))

    def list_pages(
        self,
        include: Iterable[str] = ALL_INCLUDES,
        *,
        sort: str | None = None,
        document_types: Iterable[str] = (),
        filename: str | None = None,
        reference: str | None = None,
        page_size: int = 100,
        max_pages: int | None = None,
        start: str | None = None,
    ) -> Pages:
        """Extension: every document, page by page, with related resources included.

        `sort`: `created_at`, `document_type` or `added_by` (`-` first for descending).
        """
        params: dict[str, str] = {}
        if include:
            params["include"] = include_param(include)
        if sort:
            params["sort"] = sort
        if types := ",".join(document_types):
            params["filter[document_types]"] = types
        if filename:
            params["filter[filename]"] = filename
        if reference:
            params["filter[reference]"] = reference
        return self._t.paginate("documents", params, page_size=page_size, max_pages=max_pages, start=start)
