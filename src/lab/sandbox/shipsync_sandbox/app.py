"""The sandbox ASGI app: auth, rate limit, latency and fault injection around the resource routes.

One access line per request goes to the `shipsync_sandbox` logger: method, path, status, duration.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route, Router
from starlette.types import Message, Receive, Scope, Send

from shipsync_sandbox.advance import Changes, advance
from shipsync_sandbox.deliver import Deliverer
from shipsync_sandbox.exchange_log import ExchangeLog, Recording
from shipsync_sandbox.journeys import simulate
from shipsync_sandbox.jsonapi_http import ApiProblem, json_response, problem_response
from shipsync_sandbox.routes_containers import CONTAINER_ROUTES
from shipsync_sandbox.routes_custom_fields import CUSTOM_FIELD_ROUTES
from shipsync_sandbox.routes_definitions import DEFINITION_ROUTES
from shipsync_sandbox.routes_notifications import NOTIFICATION_ROUTES
from shipsync_sandbox.routes_parties import PARTY_ROUTES
from shipsync_sandbox.routes_read import READ_ROUTES
from shipsync_sandbox.routes_shipments import SHIPMENT_ROUTES
from shipsync_sandbox.routes_tracking import TRACKING_ROUTES
from shipsync_sandbox.routes_webhook_checks import WEBHOOK_CHECK_ROUTES
from shipsync_sandbox.routes_webhooks import WEBHOOK_ROUTES
from shipsync_sandbox.state import SandboxOptions, SandboxState
from shipsync_sandbox.world import Account

access_log = logging.getLogger("shipsync_sandbox")
WRITE_METHODS = {"POST", "PATCH", "PUT", "DELETE"}
API_ROUTES = [
    *READ_ROUTES,
    *TRACKING_ROUTES,
    *SHIPMENT_ROUTES,
    *CONTAINER_ROUTES,
    *DEFINITION_ROUTES,
    *CUSTOM_FIELD_ROUTES,
    *PARTY_ROUTES,
    *WEBHOOK_CHECK_ROUTES,  # before `/webhooks/{id}`, which would take `ips` for an id
    *WEBHOOK_ROUTES,
    *NOTIFICATION_ROUTES,
]
MAX_SIMULATED_CONTAINERS = 10_000
CREATE_TRACKING_PATH = "/v2/tracking_requests"


async def health(request: Request) -> Response:
    return json_response({"status": "ok"})


def key_from(header: str) -> str | None:
    scheme, _, value = header.partition(" ")
    return value.strip() or None if scheme == "Token" else None


def _whole_number(request: Request, name: str, default: int, low: int, high: int) -> int:
    raw = request.query_params.get(name, str(default))
    try:
        value = int(raw)
    except ValueError:
        raise ApiProblem(400, "Bad Request", f"{name} must be a whole number", parameter=name) from None
    if not low <= value <= high:
        raise ApiProblem(400, "Bad Request", f"{name} must be between {low} and {high}", parameter=name)
    return value


def _wrap(endpoint: Any) -> Any:
    async def handler(request: Request) -> Response:
        try:
            response: Response = await endpoint(request)
            return response
        except ApiProblem as problem:
            return problem_response(problem)

    return handler


class SandboxApp:
    """ASGI callable; `state` is reachable for admin use (simulation, stats) and tests."""

    def __init__(self, options: SandboxOptions | None = None, state: SandboxState | None = None) -> None:
        self.state = state or SandboxState.create(options or SandboxOptions())
        routes = [Route(r.path, _wrap(r.endpoint), methods=list(r.methods or [])) for r in API_ROUTES]
        self.api = Router(routes=routes)
        self.deliverer = Deliverer(self.state.options.delivery_retry_base_s, self.state.options.deactivate_after)
        self.state.emit = self.deliverer.emit
        # Admin routes other than health show and move one account's data: they take that account's
        # `Authorization: Token <key>`, like every API request (never a key in the URL).
        self.admin_routes: list[Route] = [
            Route("/_admin/health", health, methods=["GET"]),
            Route("/_admin/stats", self._keyed(self.stats), methods=["GET"]),
            Route("/_admin/simulate", self._keyed(self.simulate), methods=["POST"]),
            Route("/_admin/deliveries", self._keyed(self.deliveries), methods=["GET"]),
            Route("/_admin/advance", self._keyed(self.advance), methods=["POST"]),
        ]
        self.admin = Router(routes=self.admin_routes)
        # The API exchanges answered, when the options ask for them (contract tests).
        self.exchanges = ExchangeLog() if self.state.options.record_exchanges else None

    def _keyed(self, endpoint: Any) -> Any:
        async def handler(request: Request) -> Response:
            key = key_from(request.headers.get("authorization", "")) or ""
            account = self.state.world.accounts.get(key)
            if account is None:
                return problem_response(ApiProblem(401, "Unauthorized", "send Authorization: Token <API_KEY> of the account"))
            try:
                response: Response = await endpoint(request, key, account)
            except ApiProblem as problem:
                return problem_response(problem)
            return response

        return handler

    async def stats(self, request: Request, key: str, account: Account) -> Response:
        """What this key's requests did: admitted, refused with 429, faults injected, statuses."""
        limiter, creates = self.state.limiter, self.state.create_limiter
        return json_response(
            {
                "admitted": limiter.admitted_by_key.get(key, 0),
                "refused_429": limiter.refused_by_key.get(key, 0) + creates.refused_by_key.get(key, 0),
                "faults_injected": self.state.faults_by_key.get(key, 0),
                "status_counts": {str(k): v for k, v in sorted(account.status_counts.items())},
            }
        )

    async def simulate(self, request: Request, key: str, account: Account) -> Response:
        """Move seeded containers through their journeys; the webhooks of the key's account receive them."""
        containers = _whole_number(request, "containers", 10, 1, MAX_SIMULATED_CONTAINERS)
        seed = _whole_number(request, "seed", 0, 0, 2**31 - 1)
        emitted = simulate(account, self.deliverer.emit, containers=containers, seed=seed)
        mine = self.deliverer.stats_by_account.get(account.id)
        return json_response({"events": emitted, "notifications": mine.notifications if mine else 0})

    async def advance(self, request: Request, key: str, account: Account) -> Response:
        """Move the account's clock on and change N records of each kind (what a daily sync must find)."""
        most = 10_000_000
        changes = Changes(
            hours=_whole_number(request, "hours", 0, 0, 24 * 366),
            new_documents=_whole_number(request, "documents", 0, 0, most),
            changed_documents=_whole_number(request, "changed_documents", 0, 0, most),
            containers=_whole_number(request, "containers", 0, 0, most),
            custom_field_values=_whole_number(request, "custom_field_values", 0, 0, most),
        )
        seed = _whole_number(request, "seed", 0, 0, 2**31 - 1)
        return json_response(advance(self.state.world, account, self.deliverer.emit, changes, seed=seed))

    async def deliveries(self, request: Request, key: str, account: Account) -> Response:
        stats = self.deliverer.stats_by_account.get(account.id) or type(self.deliverer.stats)()
        return json_response(
            {
                "notifications": stats.notifications,
                "delivered": stats.delivered,
                "attempts": stats.attempts,
                "gave_up": stats.gave_up,
                "pending": self.deliverer.pending_of(account.id),
            }
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        started = time.perf_counter()
        status_box = [0]

        async def logged_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                status_box[0] = message["status"]
            await send(message)

        scope["sandbox"] = self.state
        host = dict(scope.get("headers") or []).get(b"host")
        if host:
            self.deliverer.base = f"{scope.get('scheme', 'http')}://{host.decode('latin-1')}"
        recording = (
            Recording(scope, receive, logged_send) if self.exchanges is not None and not scope["path"].startswith("/_admin/") else None
        )
        try:
            if recording is not None:
                await self._handle(scope, recording.receive, recording.send)
            else:
                await self._handle(scope, receive, logged_send)
        finally:
            if recording is not None and self.exchanges is not None:
                self.exchanges.exchanges.append(recording.exchange())
            status = status_box[0]
            self.state.status_counts[status] = self.state.status_counts.get(status, 0) + 1
            account: Account | None = scope.get("sandbox.account")
            if account is not None:
                account.status_counts[status] = account.status_counts.get(status, 0) + 1
            access_log.info(
                "%s %s %s %.1fms",
                scope["method"],
                self._masked(scope["path"]),
                status or "reset",
                (time.perf_counter() - started) * 1000,
            )

    def _masked(self, text: str) -> str:
        """The text with any of the accounts' API keys masked: a key never reaches the access log."""
        for key in self.state.world.accounts:
            text = text.replace(key, "***")
        return text

    async def _handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        path: str = scope["path"]
        if path.startswith("/_admin/"):
            await self.admin(scope, receive, send)
            return
        headers = dict(scope["headers"])
        key = key_from(headers.get(b"authorization", b"").decode("latin-1"))
        account = self.state.world.accounts.get(key) if key else None
        if account is None:
            detail = "missing Authorization header" if not key else "invalid API key"
            await problem_response(ApiProblem(401, "Unauthorized", f"{detail}: send Authorization: Token <API_KEY>"))(scope, receive, send)
            return
        assert key is not None
        scope["sandbox.account"] = account
        refused = self._over_limit(key, scope["method"], path)
        if refused is not None:
            await problem_response(refused)(scope, receive, send)
            return
        options = self.state.options
        if options.latency_ms > 0:
            jitter = self.state.rng.uniform(0.5, 1.5)
            await asyncio.sleep(options.latency_ms * jitter / 1000)
        fault = self._draw_fault(key)
        if fault in (500, 502, 503):
            await problem_response(ApiProblem(fault, "Service Unavailable" if fault == 503 else "Server Error", "injected fault"))(
                scope, receive, send
            )
            return
        if fault == "reset_after" and scope["method"] in WRITE_METHODS:
            # Act, then lose the connection: the client cannot know the outcome.
            await self.api(scope, receive, _swallow)
            await _reset(send)
            return
        if fault in ("reset_after", "reset_before"):
            await _reset(send)
            return
        await self.api(scope, receive, send)

    def _over_limit(self, key: str, method: str, path: str) -> ApiProblem | None:
        """The 429 a request gets: over the opt-in limit on every request, or over the reference's
        limit on creating tracking requests."""
        retry_after = self.state.limiter.check(key)
        if retry_after is not None:
            return ApiProblem(
                429,
                "Too Many Requests",
                "rate limit exceeded; retry after the delay in Retry-After",
                headers={"Retry-After": str(retry_after)},
            )
        if method == "POST" and path.rstrip("/") == CREATE_TRACKING_PATH:
            retry_after = self.state.create_limiter.check(key)
            if retry_after is not None:
                detail = "You've hit the create tracking requests limit. Please try again in a minute."
                return ApiProblem(429, "Too Many Requests", detail, headers={"Retry-After": str(retry_after)})
        return None

    def _draw_fault(self, key: str) -> int | str | None:
        rate = self.state.options.fault_rate
        if rate <= 0 or self.state.rng.random() >= rate:
            return None
        self.state.faults_injected += 1
        self.state.faults_by_key[key] = self.state.faults_by_key.get(key, 0) + 1
        faults: list[int | str] = [500, 502, 503, "reset_before", "reset_after"]
        return self.state.rng.choice(faults)


async def _swallow(message: Message) -> None:
    return None


async def _reset(send: Send) -> None:
    """Start a response that promises a body and never send it: the connection is cut."""
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-length", b"1000"), (b"content-type", b"application/json")],
        }
    )
    await send({"type": "http.response.body", "body": b'{"data":', "more_body": True})
    raise ConnectionResetError("sandbox: injected connection reset")


def create_app(options: SandboxOptions | None = None) -> SandboxApp:
    return SandboxApp(options)
