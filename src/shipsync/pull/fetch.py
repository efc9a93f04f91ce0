"""Fetching batches concurrently: by id (404s noted, give-ups listed) or page by page from a listing."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field

from shipsync.api import AsyncShipsyncClient, run_with_client
from shipsync.api.jsonapi import JsonObject, Page, Pages
from shipsync.api.transport import ClientStats
from shipsync.config import Settings
from shipsync.errors import ApiError, AuthenticationError, NotFoundError
from shipsync.redaction import redact
from shipsync.warehouse.declared_rows import observed_now


@dataclass
class Fetched:
    """Resources of one batch and what could not be had."""

    data: list[JsonObject] = field(default_factory=list)
    included: list[JsonObject] = field(default_factory=list)
    not_found: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)  # "id: reason", after every retry
    stats: ClientStats = field(default_factory=ClientStats)
    next_link: str | None = None
    pages: int = 0  # listing pages read
    max_listing_pages: int | None = None  # the cap of the listing these pages are of
    # When the batch's first request left: what it read is at least this new (rows' `observed_at`).
    observed_at: str = field(default_factory=observed_now)

    def add_page(self, page: Page) -> None:
        self.data.extend(page.data)
        self.included.extend(page.included)


GetOne = Callable[[AsyncShipsyncClient, str], Awaitable[Page]]


def fetch_each(settings: Settings, ids: Sequence[str], get_one: GetOne) -> Fetched:
    """Fetch every id concurrently; a 401 stops everything at once, a 404 is noted, other give-ups listed."""
    return run_with_client(settings.client_options(), lambda client: _each(client, ids, get_one))


async def _each(client: AsyncShipsyncClient, ids: Sequence[str], get_one: GetOne) -> Fetched:
    fetched = Fetched()

    async def one(item: str) -> None:
        try:
            fetched.add_page(await get_one(client, item))
        except NotFoundError:
            fetched.not_found.append(item)
        except AuthenticationError:
            raise
        except ApiError as exc:
            fetched.failed.append(redact(f"{item}: {exc}"))

    try:
        async with asyncio.TaskGroup() as group:
            for item in ids:
                group.create_task(one(item))
    except* AuthenticationError as group_error:
        raise group_error.exceptions[0] from None
    fetched.stats = client.stats
    return fetched


# A listing from its first page (start None) or from a `links.next` cursor, at most so many pages.
ListPages = Callable[[AsyncShipsyncClient, str | None, int], Pages]


def fetch_pages(
    settings: Settings, list_pages: ListPages, start: str | None, max_pages: int, last: Callable[[Page], bool] | None = None
) -> Fetched:
    """Up to `max_pages` pages of a listing, from its first page or from a `links.next` cursor;
    `next_link` is where the next batch starts (None: the listing is done); `last(page)` true ends
    the listing after that page (an incremental walk reached what it knows)."""
    return run_with_client(settings.client_options(), lambda client: _pages(client, list_pages, start, max_pages, last))


async def _pages(
    client: AsyncShipsyncClient, list_pages: ListPages, start: str | None, max_pages: int, last: Callable[[Page], bool] | None
) -> Fetched:
    fetched = Fetched(max_listing_pages=client.transport.max_listing_pages)
    async with aclosing(list_pages(client, start, max_pages)) as pages:
        async for page in pages:
            fetched.pages += 1
            fetched.add_page(page)
            fetched.next_link = page.next_link
            if last is not None and last(page):
                fetched.next_link = None
                break
    fetched.stats = client.stats
    return fetched
