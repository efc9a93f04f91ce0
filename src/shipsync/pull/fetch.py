"""Fetching batches concurrently: by id (404s noted, give-ups listed) or page by page from a listing."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from shipsync.api import AsyncShipsyncClient
from shipsync.api.jsonapi import JsonObject, Page
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
    # When the batch's first request left: what it read is at least this new (rows' `observed_at`).
    observed_at: str = field(default_factory=observed_now)

    def add_page(self, page: Page) -> None:
        self.data.extend(page.data)
        self.included.extend(page.included)


GetOne = Callable[[AsyncShipsyncClient, str], Awaitable[Page]]


async def fetch_each(settings: Settings, ids: Sequence[str], get_one: GetOne) -> Fetched:
    """Fetch every id concurrently; a 401 stops everything at once, a 404 is noted, other give-ups listed."""
    fetched = Fetched()
    async with AsyncShipsyncClient.from_settings(settings) as client:

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


ListPages = Callable[[AsyncShipsyncClient], AsyncIterator[Page]]


async def fetch_pages(
    settings: Settings, list_pages: ListPages, start: str | None, max_pages: int, last: Callable[[Page], bool] | None = None
) -> Fetched:
    """Up to `max_pages` pages of a listing, from its first page or from a `links.next` cursor;
    `last(page)` true ends the listing after that page (an incremental walk reached what it knows)."""
    fetched = Fetched()
    async with AsyncShipsyncClient.from_settings(settings) as client:
        if start is None:
            listing = list_pages(client)
            page = await anext(aiter(listing))
            await listing.aclose()  # type: ignore[attr-defined]
        else:
            page = await client.transport.get_page(start)
        fetched.add_page(page)
        seen = 1
        ended = last is not None and last(page)
        while page.next_link and seen < max_pages and not ended:
            page = await client.transport.get_page(page.next_link)
            fetched.add_page(page)
            seen += 1
            ended = last is not None and last(page)
        fetched.next_link = None if ended else page.next_link
        fetched.stats = client.stats
    return fetched
