"""The client: one object per API key that groups the resource families over one transport.

`AsyncShipsyncClient` is the core; `run_with_client` runs one operation on it for callers that are
synchronous (pulls, bulk, webhook registration). Both are made from `ClientOptions`, plain values
that the entry point builds from its settings: this package reads no configuration of its own.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Self, TypeVar

import httpx

from shipsync.api.clock import Clock
from shipsync.api.custom_fields import CustomFields
from shipsync.api.definitions import CustomFieldDefinitions
from shipsync.api.documents import Documents
from shipsync.api.jsonapi import DEFAULT_MAX_LISTING_PAGES
from shipsync.api.ratelimit import RateBudget, RateLimit, RequestLimiter, shared_limiter
from shipsync.api.reference_data import DocumentSchemas, MetroAreas
from shipsync.api.retry import RetryPolicy
from shipsync.api.shipments import Shipments
from shipsync.api.tracking_reads import Containers, Parties, Places, ShippingLines
from shipsync.api.tracking_requests import TrackingRequests
from shipsync.api.transport import DEFAULT_MAX_RESPONSE_BYTES, ClientStats, Transport
from shipsync.api.webhooks import Webhooks

T = TypeVar("T")


@dataclass(frozen=True)
class ClientOptions:
    """What a client is made of: where the service is, the key, and how to pace and retry requests.

    `rate_budget` is a budget shared beyond this process (every worker on one key); None: this
    process's own rolling window only.
    """

    base_url: str
    api_key: str
    rate_limit: RateLimit | None = RateLimit(100, 60)
    rate_budget: RateBudget | None = None
    max_retries: int = 5
    retry_base_delay: float = 0.25
    concurrency: int = 8
    connect_timeout: float = 10.0
    read_timeout: float = 30.0
    max_listing_pages: int = DEFAULT_MAX_LISTING_PAGES
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES


class AsyncShipsyncClient:
    """All operations of the service for one API key. Use as `async with`."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        rate_limit: RateLimit | None = RateLimit(100, 60),
        limiter: RequestLimiter | None = None,
        policy: RetryPolicy | None = None,
        concurrency: int = 8,
        connect_timeout: float = 10.0,
        read_timeout: float = 30.0,
        http_transport: httpx.AsyncBaseTransport | None = None,
        clock: Clock | None = None,
        rng: random.Random | None = None,
        max_listing_pages: int = DEFAULT_MAX_LISTING_PAGES,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    ) -> None:
        self.transport = Transport(
            base_url,
            api_key,
            limiter=limiter or shared_limiter(base_url, api_key, rate_limit, clock),
            policy=policy,
            connect_timeout=connect_timeout,
            read_timeout=read_timeout,
            concurrency=concurrency,
            http_transport=http_transport,
            clock=clock,
            rng=rng,
            max_listing_pages=max_listing_pages,
            max_response_bytes=max_response_bytes,
        )
        self.documents = Documents(self.transport)
        self.metro_areas = MetroAreas(self.transport)
        self.document_schemas = DocumentSchemas(self.transport)
        self.tracking_requests = TrackingRequests(self.transport)
        self.shipments = Shipments(self.transport)
        self.containers = Containers(self.transport)
        self.places = Places(self.transport)
        self.shipping_lines = ShippingLines(self.transport)
        self.parties = Parties(self.transport)
        self.custom_field_definitions = CustomFieldDefinitions(self.transport)
        self.custom_fields = CustomFields(self.transport)
        self.webhooks = Webhooks(self.transport)

    @classmethod
    def from_options(
        cls,
        options: ClientOptions,
        *,
        limiter: RequestLimiter | None = None,
        http_transport: httpx.AsyncBaseTransport | None = None,
    ) -> Self:
        if limiter is None and options.rate_budget is not None:
            limiter = options.rate_budget.limiter(options.api_key, options.rate_limit)
        return cls(
            options.base_url,
            options.api_key,
            rate_limit=options.rate_limit,
            limiter=limiter,
            policy=RetryPolicy(max_retries=options.max_retries, base_delay=options.retry_base_delay),
            concurrency=options.concurrency,
            connect_timeout=options.connect_timeout,
            read_timeout=options.read_timeout,
            http_transport=http_transport,
            max_listing_pages=options.max_listing_pages,
            max_response_bytes=options.max_response_bytes,
        )

    def __repr__(self) -> str:
        return f"AsyncShipsyncClient(base_url={self.transport.base_url!r})"

    @property
    def stats(self) -> ClientStats:
        return self.transport.stats

    async def aclose(self) -> None:
        await self.transport.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        await self.aclose()


def run_with_client(
    options: ClientOptions,
    operation: Callable[[AsyncShipsyncClient], Awaitable[T]],
    *,
    http_transport: httpx.AsyncBaseTransport | None = None,
) -> T:
    """Run one async operation on a client made from `options`, in an event loop of its own.

    The one bridge from the synchronous callers (pulls, bulk apply, webhook registration) to the
    async client: the client is made inside the loop that uses it and closed whatever happens.
    """

    async def run() -> T:
        async with AsyncShipsyncClient.from_options(options, http_transport=http_transport) as client:
            return await operation(client)

    return asyncio.run(run())
