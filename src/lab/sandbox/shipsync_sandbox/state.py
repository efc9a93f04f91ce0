"""The sandbox's run-time state shared by its handlers: options, world, limits and counters."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from starlette.requests import Request

from shipsync_sandbox.limits import CREATE_LIMIT, Now, RateLimit, ServerRateLimit
from shipsync_sandbox.listing_order import ListingOrder
from shipsync_sandbox.seed import AccountSize, build_world
from shipsync_sandbox.timeline import start_of
from shipsync_sandbox.world import Account, World

DEFAULT_API_KEYS = ("sandbox-key-1", "sandbox-key-2")


@dataclass(frozen=True)
class SandboxOptions:
    api_keys: tuple[str, ...] = DEFAULT_API_KEYS
    seed: int = 7
    documents: int = 200
    # A large account (issue 14's benchmarks): unset counts follow the documents (see AccountSize).
    shipments: int | None = None
    containers: int | None = None
    custom_field_values: int = 0
    # The reference limits creating tracking requests (100 a minute per key, then 429).
    create_limit: RateLimit | None = CREATE_LIMIT
    # Opt-in: one limit on every request of a key (the owner's notes: 100 a minute per key), for
    # tests of a client's request budget. The reference states no such limit: off by default.
    rate_limit: RateLimit | None = None
    # The time the limits' windows run on: a test's fake clock, shared with its client's
    # limiter, lets it cross windows without waiting them out.
    rate_clock: Now | None = None
    # The order every listing answers in (`listing_order.py`).
    listing_order: ListingOrder = "reference"
    # Keep every API exchange answered (`exchange_log.py`), for contract tests.
    record_exchanges: bool = False
    fault_rate: float = 0.0
    latency_ms: float = 0.0
    # Deliveries of webhook notifications: retry schedule base (the service backs off up to 12 times).
    delivery_retry_base_s: float = 0.5
    # A webhook is deactivated after this many notifications in a row gave up (None: never).
    deactivate_after: int | None = 10
    # How long a new tracking request stays pending before it settles (carrier detection, the line's answer).
    tracking_delay_s: float = 2.0
    # Per API key, the webhook event kinds its plan offers (`GET /webhooks/events`); others get all 43.
    plans: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # The moment the world starts at (`timeline.py`): its journeys, last free days and ETAs are
    # placed relative to it. None: the current hour, so a fresh sandbox is about the present.
    start: datetime | None = None


def _size(options: SandboxOptions) -> AccountSize:
    return AccountSize(options.documents, options.shipments, options.containers, options.custom_field_values)


# (account, event kind, reference object, included resources[, created_at])
EventSink = Callable[..., None]


@dataclass
class SandboxState:
    options: SandboxOptions
    world: World
    limiter: ServerRateLimit
    create_limiter: ServerRateLimit
    rng: random.Random
    status_counts: dict[int, int] = field(default_factory=dict)
    faults_injected: int = 0
    faults_by_key: dict[str, int] = field(default_factory=dict)
    # Set by the webhook deliverer: called with (account, event kind, reference object, included).
    emit: EventSink = lambda account, event, reference, included: None

    @classmethod
    def create(cls, options: SandboxOptions) -> SandboxState:
        world = build_world(list(options.api_keys), start=start_of(options.start), seed=options.seed, size=_size(options))
        for key, kinds in options.plans:
            if key in world.accounts:
                world.accounts[key].event_kinds = tuple(kinds)
        limiter = ServerRateLimit(options.rate_limit, options.rate_clock)
        create_limiter = ServerRateLimit(options.create_limit, options.rate_clock)
        return cls(options=options, world=world, limiter=limiter, create_limiter=create_limiter, rng=random.Random(options.seed))


def state_of(request: Request) -> SandboxState:
    state: SandboxState = request.scope["sandbox"]
    return state


def account_of(request: Request) -> Account:
    account: Account = request.scope["sandbox.account"]
    return account
