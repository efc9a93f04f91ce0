"""Reading the current custom field values a file touches, by whichever route costs the fewest
requests for this file: the account's whole listing (`GET /custom_fields`), one listing per
definition the file names (`filter[definition_id]`), or each entity's own route
(`GET /{shipments,containers,tracking_requests}/{id}/custom_fields`).

A listing's cost is its pages of 100, known from `meta.total` on its first page (else from
`links.last`); an entity costs one request (its values fit on a page). The account's listing is
asked first: that first page is the first of the pages that route reads if it wins, and its total
bounds the others. Definitions' first pages are asked one at a time, and only while that route can
still win (each is the first page that route reads). Whatever the route, every value is read as
the service has it now: a write is never based on a value older than the run.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Literal
from urllib.parse import parse_qs, urlsplit

from shipsync.api import AsyncShipsyncClient
from shipsync.api.jsonapi import JsonObject, Page, Pages
from shipsync.bulk.progress import Advance, RequestBudget, Stage, no_progress
from shipsync.errors import NotFoundError

PAGE_SIZE = 100
log = logging.getLogger("shipsync.bulk")
Route = Literal["listing", "definitions", "entities"]
UNLIMITED = RequestBudget(None)
LABELS = {
    "listing": "the account's values",
    "definitions": "the values of the file's fields",
    "entities": "the values of the file's entities",
}


@dataclass(frozen=True)
class ValueScope:
    """What a file touches: its entities, and the definitions (id -> api_slug) of its fields."""

    entities: frozenset[tuple[str, str]]
    definitions: Mapping[str, str]


@dataclass
class ValuesRead:
    """The values read, and by which route: `listing` covers the account, `definitions` the
    scope's definitions, `entities` the scope's entities (what the warehouse may drop if absent)."""

    route: Route
    values: list[JsonObject]
    scope: ValueScope


def pages_of(first: Page) -> float:
    """How many pages the listing that `first` begins has; infinity when the answer does not say."""
    if not first.next_link:
        return 1
    total, size = first.meta.get("total"), first.meta.get("size")
    size = size if isinstance(size, int) and not isinstance(size, bool) and size > 0 else PAGE_SIZE
    if isinstance(total, int) and not isinstance(total, bool) and total >= 0:
        return max(1, math.ceil(total / size))
    last = first.links.get("last")
    last = last.get("href") if isinstance(last, dict) else last
    if isinstance(last, str):
        number = parse_qs(urlsplit(last).query).get("page[number]", [""])[0]
        if number.isdigit():
            return max(1, int(number))
    return math.inf


async def _rest(first: Page, pages: AsyncIterator[Page], advance: Advance) -> list[JsonObject]:
    """The first page's values and those of every page after it."""
    found = list(first.data)
    async for page in pages:
        advance(1)
        found.extend(page.data)
    return found


async def _of_entity(client: AsyncShipsyncClient, entity: tuple[str, str], advance: Advance) -> list[JsonObject]:
    found: list[JsonObject] = []
    try:
        async for page in client.custom_fields.entity_pages(*entity):
            advance(1)
            found.extend(page.data)
    except NotFoundError:
        return []  # gone at the service: it has no values, and no plan can write to it either
    for value in found:  # the route names the entity; an answer that leaves it out still means it
        relationships = value.setdefault("relationships", {})
        if isinstance(relationships, dict) and not (relationships.get("entity") or {}).get("data"):
            relationships["entity"] = {"data": {"type": entity[0], "id": entity[1]}}
    return found


async def _close(*iterators: Pages) -> None:
    """Stop listings that were begun and will not be read on."""
    for pages in iterators:
        await pages.aclose()


async def read_values(
    client: AsyncShipsyncClient, scope: ValueScope, *, progress: Stage = no_progress, budget: RequestBudget = UNLIMITED
) -> ValuesRead:
    """The current values of what `scope` touches, through the cheapest route for it."""
    if not scope.entities:
        return ValuesRead("entities", [], scope)
    by_entity, floor_by_definition = len(scope.entities), len(scope.definitions)
    listing = client.custom_fields.list_pages(page_size=PAGE_SIZE)
    first = await anext(listing)
    listing_left = pages_of(first) - 1
    started: list[tuple[Page, Pages]] = []
    route: Route = "listing"
    if listing_left > min(by_entity, floor_by_definition):
        route = "entities" if by_entity <= floor_by_definition else "definitions"
    if route == "definitions":
        for definition_id in scope.definitions:
            pages = client.custom_fields.list_pages(definition_id=definition_id, page_size=PAGE_SIZE)
            started.append((await anext(pages), pages))
            definitions_left = sum(pages_of(p) - 1 for p, _ in started) + floor_by_definition - len(started)
            if definitions_left > min(listing_left, by_entity):
                await _close(*(pages for _, pages in started))
                route = "listing" if listing_left <= by_entity else "entities"
                break
    more = {
        "listing": listing_left,
        "definitions": sum(pages_of(p) - 1 for p, _ in started),
        "entities": by_entity,
    }[route]
    label = LABELS[route]
    total = None if math.isinf(more) else int(more)
    log.info(
        "reading %s: %d requests to choose the route, %s more", label, 1 + len(started), "an unknown number" if total is None else total
    )
    with (progress if total != 0 else no_progress)(f"reading {label}", total, budget) as advance:  # nothing left: no wait to show
        if route == "listing":
            return ValuesRead(route, await _rest(first, listing, advance), scope)
        await _close(listing)
        if route == "definitions":
            groups = await asyncio.gather(*(_rest(p, pages, advance) for p, pages in started))
        else:
            groups = await asyncio.gather(*(_of_entity(client, e, advance) for e in sorted(scope.entities)))
    return ValuesRead(route, [v for group in groups for v in group], scope)
