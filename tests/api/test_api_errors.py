"""Every error class, raised from real HTTP answers; no httpx exception escapes."""

from __future__ import annotations

import asyncio
import json

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from shipsync.api import AsyncShipsyncClient
from shipsync.api.ratelimit import RateLimit
from shipsync.api.retry import RetryPolicy
from shipsync.errors import (
    ApiError,
    ApiNetworkError,
    AuthenticationError,
    NotFoundError,
    OutcomeUnknownError,
    PermissionDeniedError,
    RateLimitedError,
    UpstreamError,
    ValidationError,
)
from shipsync_sandbox.serving import BackgroundServer, free_port
from support.sandboxes import K1, RunningSandbox, SandboxFactory

FAST = RetryPolicy(max_retries=2, base_delay=0.01, max_delay=0.02)


async def test_401_is_authentication_error_without_the_key(sandbox: RunningSandbox) -> None:
    async with AsyncShipsyncClient(sandbox.api_url, "wrong-secret-key-123", rate_limit=None) as client:
        with pytest.raises(AuthenticationError) as caught:
            await client.metro_areas.get("USLAX")
    assert caught.value.status == 401
    assert "wrong-secret-key-123" not in str(caught.value) and "wrong-secret-key-123" not in repr(caught.value)
    assert "wrong-secret-key-123" not in repr(client) and "wrong-secret-key-123" not in repr(client.transport)


async def test_404_422(sandbox: RunningSandbox) -> None:
    async with sandbox.client() as client:
        with pytest.raises(NotFoundError) as missing:
            await client.documents.get("no-such-document")
        assert missing.value.errors[0].detail == "Couldn't find Document"
        with pytest.raises(ValidationError) as invalid:
            await client.custom_field_definitions.create(entity_type="Boat", api_slug="x", display_name="x", data_type="number")
        assert invalid.value.errors[0].pointer == "/data/attributes/entity_type"


async def test_429_after_retries_is_rate_limited(make_sandbox: SandboxFactory) -> None:
    sandbox = make_sandbox(rate_limit=RateLimit(1, 30))
    async with sandbox.client(policy=RetryPolicy(max_retries=0)) as client:
        await client.metro_areas.get("USLAX")
        with pytest.raises(RateLimitedError) as caught:
            await client.metro_areas.get("USLAX")
    assert caught.value.errors[0].title == "Too Many Requests"


async def test_5xx_after_retries_is_upstream_and_write_is_unknown(make_sandbox: SandboxFactory) -> None:
    sandbox = make_sandbox()
    app = sandbox.app
    app.state.options = type(app.state.options)(**{**app.state.options.__dict__, "fault_rate": 1.0})
    async with sandbox.client(policy=FAST) as client:
        with pytest.raises((UpstreamError, ApiNetworkError)):
            await client.metro_areas.get("USLAX")
        with pytest.raises(OutcomeUnknownError):
            await client.webhooks.create("https://example.test/h", ["container.created"])


async def test_connection_refused_is_network_error() -> None:
    url = f"http://127.0.0.1:{free_port()}/v2"
    async with AsyncShipsyncClient(url, K1, rate_limit=None, policy=FAST) as client:
        with pytest.raises(ApiNetworkError) as caught:
            await client.metro_areas.get("USLAX")
        # Refused before sending: even a POST is provably not acted on, so it is retried, then fails.
        with pytest.raises(ApiNetworkError):
            await client.webhooks.create("https://example.test/h", ["container.created"])
    assert client.stats.retries == 4
    assert not isinstance(caught.value, OutcomeUnknownError)


def _bad_service() -> Starlette:
    async def garbage(request: Request) -> Response:
        kind = request.path_params["kind"]
        if kind == "html502":
            return Response("<html><body>502 Bad Gateway</body></html>", 502, media_type="text/html")
        if kind == "html200":
            return Response("<html>hello</html>", 200, media_type="text/html")
        if kind == "notjson":
            return Response("{not json", 200, media_type="application/json")
        if kind == "nodata":
            return Response(json.dumps({"meta": {}}), 200, media_type="application/json")
        if kind == "forbidden":  # as the reference answers a feature an account lacks (vessel positions)
            body = {"errors": [{"status": "403", "title": "Forbidden", "detail": "Feature not enabled"}]}
            return Response(json.dumps(body), 403, media_type="application/json")
        if kind == "noid":
            return Response(json.dumps({"data": {"type": "metro_area", "attributes": {}}}), 200, media_type="application/json")
        if kind == "slow":
            # Slower than the client's read timeout; ends once the client has given up, so the
            # server stops at once rather than after a graceful wait for this handler.
            for _ in range(200):
                if await request.is_disconnected():
                    break
                await asyncio.sleep(0.01)
        return Response("{}", 200, media_type="application/json")

    return Starlette(routes=[Route("/v2/metro_areas/{kind}", garbage)])


@pytest.mark.parametrize(
    ("kind", "error"),
    [
        ("forbidden", PermissionDeniedError),
        ("html502", UpstreamError),
        ("html200", ApiNetworkError),
        ("notjson", ApiNetworkError),
        ("nodata", ApiNetworkError),
        ("noid", ApiNetworkError),
        ("slow", ApiNetworkError),
    ],
)
async def test_malformed_service_responses(kind: str, error: type[ApiError]) -> None:
    with BackgroundServer(_bad_service()) as server:
        async with AsyncShipsyncClient(f"{server.url}/v2", K1, rate_limit=None, policy=FAST, read_timeout=0.3) as client:
            with pytest.raises(error) as caught:
                await client.metro_areas.get(kind)
    assert isinstance(caught.value, ApiError)
    assert "<html" not in str(caught.value)


async def test_a_huge_included_array_is_read_whole() -> None:
    count = 50_000
    refs = [{"type": "container", "id": f"c-{n}"} for n in range(count)]
    body = json.dumps(
        {
            "data": {"id": "d-1", "type": "document", "attributes": {"name": "big"}, "relationships": {"containers": {"data": refs}}},
            "included": [{**ref, "attributes": {"number": f"MSCU{n:07d}"}} for n, ref in enumerate(refs)],
        }
    )

    async def document(request: Request) -> Response:
        return Response(body, 200, media_type="application/vnd.api+json")

    app = Starlette(routes=[Route("/v2/documents/{id}", document)])
    with BackgroundServer(app) as server:
        async with AsyncShipsyncClient(f"{server.url}/v2", K1, rate_limit=None, policy=FAST) as client:
            fetched = await client.documents.get("d-1")
    assert fetched.document.id == "d-1"
    assert len(fetched.included) == count
    assert {r.id for r in fetched.included} == {ref["id"] for ref in refs}
