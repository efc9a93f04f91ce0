"""The limiter, Retry-After, retries under faults and no duplicate creates under resets."""

from __future__ import annotations

import asyncio

from shipsync.api.ratelimit import RateLimit
from shipsync.api.retry import RetryPolicy
from shipsync.errors import NotFoundError, OutcomeUnknownError, ShipsyncError
from support.clock import FakeClock
from support.sandboxes import K1, K2, RunningSandbox, SandboxFactory


async def test_pull_longer_than_window_gets_no_429(make_sandbox: SandboxFactory) -> None:
    # The client's limiter and the sandbox's window run on one fake clock: the windows are crossed
    # as the limiter sleeps, without waiting them out. The client gets the shared limiter of its
    # clock, which no other test uses.
    limit, clock = RateLimit(20, 2), FakeClock()
    sandbox = make_sandbox(rate_limit=limit, rate_clock=clock, documents=50)
    ids = list(sandbox.state.world.accounts[K1].documents)
    async with sandbox.client(rate_limit=limit, clock=clock, concurrency=8) as client:
        await asyncio.gather(*(client.documents.get(i) for i in ids))
    assert client.stats.throttled == 0 and sandbox.state.limiter.refused == 0
    assert sandbox.state.limiter.admitted == 50
    # 50 requests at 20 per 2 s need two full windows, and the limiter must not waste budget.
    assert 4.0 <= clock.now() < 8.0


async def test_retry_after_is_honoured(make_sandbox: SandboxFactory) -> None:
    clock = FakeClock()
    sandbox = make_sandbox(rate_limit=RateLimit(3, 1), rate_clock=clock)
    async with sandbox.client(policy=RetryPolicy(max_retries=5), clock=clock) as client:  # no client-side limit
        results = await asyncio.gather(*(client.metro_areas.get("USLAX") for _ in range(6)))
    assert len(results) == 6
    assert client.stats.throttled >= 1
    assert clock.now() >= 0.9  # waited for the window named by Retry-After


async def test_reads_complete_under_faults(make_sandbox: SandboxFactory) -> None:
    sandbox = make_sandbox(fault_rate=0.3, seed=11)
    ids = list(sandbox.state.world.accounts[K1].documents)
    async with sandbox.client(policy=RetryPolicy(max_retries=10, base_delay=0.005, max_delay=0.05)) as client:
        results = await asyncio.gather(*(client.documents.get(i) for i in ids))
    assert [r.document.id for r in results] == ids
    assert client.stats.retries > 0 and sandbox.state.faults_injected > 0


async def test_no_duplicate_creates_under_resets(make_sandbox: SandboxFactory) -> None:
    sandbox = make_sandbox(fault_rate=0.5, seed=3)
    outcomes: dict[str, str] = {}
    async with sandbox.client(policy=RetryPolicy(max_retries=10, base_delay=0.005, max_delay=0.05)) as client:
        for n in range(40):
            url = f"https://example.test/hook/{n}"
            try:
                await client.webhooks.create(url, ["container.created"])
                outcomes[url] = "created"
            except OutcomeUnknownError:
                outcomes[url] = "unknown"
    stored = [w["attributes"]["url"] for w in sandbox.state.world.accounts[K1].webhooks.values()]
    assert len(stored) == len(set(stored)), "a create was sent twice"
    assert {u for u, o in outcomes.items() if o == "created"} <= set(stored)
    assert "unknown" in outcomes.values()


async def test_accounts_are_isolated(sandbox: RunningSandbox) -> None:
    world = sandbox.state.world
    doc_id = next(iter(world.accounts[K1].documents))
    tr_id = next(iter(world.accounts[K1].tracking_requests))
    async with sandbox.client(K1) as one, sandbox.client(K2) as two:
        definition = await one.custom_field_definitions.create(
            entity_type="Container", api_slug="k1_only", display_name="K1", data_type="short_text"
        )
        webhook = await one.webhooks.create("https://example.test/k1", ["container.created"])
        shipment_id = world.accounts[K1].documents[doc_id]["relationships"]["shipments"]["data"][0]["id"]
        container_id = world.accounts[K1].documents[doc_id]["relationships"]["cargos"]["data"][0]["id"]
        value = await one.custom_fields.create(entity_type="container", entity_id=container_id, api_slug="k1_only", value="x")
        for attempt in (
            two.documents.get(doc_id),
            two.tracking_requests.update(tr_id, ref_number="x"),
            two.shipments.update(shipment_id, tags=["x"]),
            two.custom_field_definitions.update(definition.id, {"display_name": "K2"}),
            two.webhooks.delete(webhook.id),
            two.custom_fields.update(value.id, "y"),
            two.custom_fields.delete(value.id),
            two.custom_field_definitions.options(definition.id),
        ):
            try:
                await attempt
                raise AssertionError("K2 reached K1's data")
            except NotFoundError:
                pass
        assert "k1_only" not in {d.api_slug for d in await two.custom_field_definitions.list()}
        assert await two.custom_fields.list() == []
        own_container = next(iter(world.accounts[K2].documents.values()))["relationships"]["cargos"]["data"][0]["id"]
        try:
            await two.custom_fields.create(entity_type="container", entity_id=own_container, api_slug="k1_only", value="x")
            raise AssertionError("K2 used K1's definition")
        except ShipsyncError as exc:
            assert "api_slug" in str(exc)
