"""JSON:API documents: resources as plain dicts, the `included` index, relationships and errors."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Iterable
from dataclasses import dataclass, field
from typing import Any

from shipsync.errors import ErrorItem, RunawayListingError

JsonObject = dict[str, Any]


def relationships_of(resource: Any) -> JsonObject:
    """A resource's `relationships` member; {} when it is absent, null or not an object."""
    relationships = resource.get("relationships") if isinstance(resource, dict) else None
    return relationships if isinstance(relationships, dict) else {}


def relationship(resource: Any, name: str) -> JsonObject | None:
    """The relationship object `name` of a resource (`{data, links, meta}`), or None when absent or odd."""
    found = relationships_of(resource).get(name)
    return found if isinstance(found, dict) else None


def linkage(resource: Any, name: str) -> Any:
    """The `data` of relationship `name`: `{type, id}`, a list of them, or None (absent, null or odd)."""
    found = relationship(resource, name)
    return found.get("data") if found is not None else None


def ref_of(relationship: Any) -> tuple[str, str] | None:
    """(type, id) of a to-one relationship object `{data: {type, id}}`, or None."""
    if not isinstance(relationship, dict):
        return None
    data = relationship.get("data")
    if isinstance(data, dict) and data.get("id") is not None and data.get("type"):
        return str(data["type"]), str(data["id"])
    return None


def refs_of(relationship: Any) -> list[tuple[str, str]]:
    """(type, id) pairs of a to-many relationship `{data: [{type, id}, ...]}`."""
    if not isinstance(relationship, dict):
        return []
    data = relationship.get("data")
    if isinstance(data, dict):
        one = ref_of(relationship)
        return [one] if one else []
    if not isinstance(data, list):
        return []
    return [
        (str(item["type"]), str(item["id"])) for item in data if isinstance(item, dict) and item.get("id") is not None and item.get("type")
    ]


def is_resource(value: Any) -> bool:
    return isinstance(value, dict) and value.get("id") is not None and isinstance(value.get("type"), str)


@dataclass
class IncludedIndex:
    """Included resources indexed by (type, id), so relationships resolve in O(1)."""

    by_key: dict[tuple[str, str], JsonObject] = field(default_factory=dict)

    @classmethod
    def of(cls, included: Iterable[Any]) -> IncludedIndex:
        index = cls()
        index.add(included)
        return index

    def add(self, included: Iterable[Any]) -> None:
        for resource in included:
            if is_resource(resource):
                self.by_key[(resource["type"], str(resource["id"]))] = resource

    def get(self, type_: str, id_: str) -> JsonObject | None:
        return self.by_key.get((type_, id_))

    def resolve(self, relationship: Any) -> JsonObject | None:
        """The included resource a to-one relationship points at, if it was included."""
        key = ref_of(relationship)
        return self.by_key.get(key) if key else None

    def resolve_many(self, relationship: Any) -> list[JsonObject]:
        return [r for key in refs_of(relationship) if (r := self.by_key.get(key)) is not None]

    def __len__(self) -> int:
        return len(self.by_key)


@dataclass
class Page:
    """One JSON:API response: primary data (always a list here), included resources, links, meta."""

    data: list[JsonObject]
    included: list[JsonObject]
    links: dict[str, Any]
    meta: dict[str, Any]

    @property
    def next_link(self) -> str | None:
        link = self.links.get("next")
        if isinstance(link, dict):  # JSON:API allows link objects {href: ...}
            link = link.get("href")
        return link if isinstance(link, str) and link else None


# Pages a listing may have unless the settings say otherwise (SHIPSYNC_MAX_LISTING_PAGES): a
# million resources at the largest page size, so only a listing that never ends reaches it.
DEFAULT_MAX_LISTING_PAGES = 10_000
_LINK_SHOWN = 200  # characters of a link in an error message


@dataclass
class ListingWalk:
    """Where a walk down a listing has been: the `links.next` it followed and the pages it read.
    A link followed before (a cursor that repeats) or a page past `max_pages` stops the walk with
    a `RunawayListingError` instead of paging forever, holding the rate budget and the run."""

    listing: str  # what the error names: the listing's path, or the step walking it
    max_pages: int = DEFAULT_MAX_LISTING_PAGES
    pages: int = 0
    followed: set[str] = field(default_factory=set)

    def read(self, pages: int = 1) -> None:
        """Count pages read."""
        self.pages += pages

    def follow(self, link: str) -> str:
        """`link`, the next page to read, unless the walk followed it before or has read its cap."""
        if link in self.followed:
            shown = link if len(link) <= _LINK_SHOWN else link[:_LINK_SHOWN] + "..."
            raise RunawayListingError(
                f"the listing {self.listing} repeats a page after {self.pages:,} pages "
                f"(links.next {shown} again): stopped instead of paging forever"
            )
        if self.pages >= self.max_pages:
            raise RunawayListingError(
                f"the listing {self.listing} runs past {self.max_pages:,} pages (SHIPSYNC_MAX_LISTING_PAGES): stopped; "
                "a listing that never ends is the service's fault, a longer one needs a larger cap"
            )
        self.followed.add(link)
        return link


# A listing's pages, fetched as they are read. An async generator, so that a reader that stops early
# closes it (`contextlib.aclosing`) at once instead of whenever it is collected.
Pages = AsyncGenerator[Page, None]


def parse_page(body: Any) -> Page:
    """Read a response document; `data` may be one resource or a list. Raises ValueError if malformed."""
    if not isinstance(body, dict):
        raise ValueError("response body is not a JSON object")
    data = body.get("data")
    if isinstance(data, dict):
        items = [data]
    elif isinstance(data, list):
        items = data
    elif data is None and "data" in body:
        items = []
    else:
        raise ValueError("response body has no `data` member")
    if not all(is_resource(item) for item in items):
        raise ValueError("response `data` holds a member that is not a resource (missing id or type)")
    included = body.get("included")
    if not isinstance(included, list):
        included = []  # absent, null or odd: the primary data still reads
    links = body.get("links") if isinstance(body.get("links"), dict) else {}
    meta = body.get("meta") if isinstance(body.get("meta"), dict) else {}
    return Page(items, [r for r in included if is_resource(r)], links or {}, meta or {})


def parse_errors(body: Any) -> tuple[ErrorItem, ...]:
    """The `errors` array of a failure body, tolerant of missing or odd members."""
    if not isinstance(body, dict):
        return ()
    if isinstance(body.get("errors"), str):  # some endpoints answer `errors` as one string
        return (ErrorItem(detail=body["errors"]),)
    if not isinstance(body.get("errors"), list):
        return ()
    items = []
    for raw in body["errors"]:
        if not isinstance(raw, dict):
            continue
        source: dict[str, Any] = raw["source"] if isinstance(raw.get("source"), dict) else {}

        def text(value: Any) -> str | None:
            return None if value is None else str(value)

        items.append(
            ErrorItem(
                title=text(raw.get("title")),
                detail=text(raw.get("detail")),
                pointer=text(source.get("pointer")),
                parameter=text(source.get("parameter")),
                code=text(raw.get("code")),
                status=text(raw.get("status")),
            )
        )
    return tuple(items)


def resource_document(type_: str, attributes: JsonObject, relationships: JsonObject | None = None) -> JsonObject:
    """The request body for a create or update: `{data: {type, attributes, relationships?}}`."""
    data: JsonObject = {"type": type_, "attributes": attributes}
    if relationships:
        data["relationships"] = relationships
    return {"data": data}
