"""Registering webhooks as the service answers today (issue 12, items 1 and 4): `headers: null`
and other odd members never lose the secret; kinds are checked against `GET /webhooks/events`
(the account's plan), else against the 43 known kinds; the nine newer kinds are accepted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from shipsync.config import load_settings
from shipsync.errors import InputError
from shipsync.webhooks.event_kinds import EVENT_KINDS, NEWER_EVENT_KINDS, SPEC_EVENT_KINDS
from shipsync.webhooks.registration import register_webhook
from shipsync.webhooks.secrets_store import store_path
from shipsync_sandbox import SandboxOptions, create_app
from support.http import HTTP
from support.lake import analyst
from support.sandbox_transport import IN_PROCESS_URL, SandboxTransport
from support.sandboxes import K1, K2, RunningSandbox, SandboxFactory, settings_for


def stored_secrets(warehouse: Path) -> dict[str, str]:
    # Any key will do to find the store; a one-letter one would be masked in every later log line.
    path = store_path(load_settings(warehouse=warehouse, api_key="key-to-find-the-store", api_url="http://x"))
    return json.loads(path.read_text()) if path.exists() else {}


def service_secret(sandbox: RunningSandbox, webhook_id: str, key: str = K1) -> str:
    secret: str = sandbox.state.world.accounts[key].webhooks[webhook_id]["attributes"]["secret"]
    return secret


def test_headers_null_in_the_answer_keeps_the_secret(sandbox: RunningSandbox, warehouse: Path) -> None:
    settings = settings_for(sandbox, warehouse)
    webhook = register_webhook(settings, "https://hooks.example.test/w", ["container.transport.vessel_arrived"])
    # The service answers `headers: null` when none were set; the registration still completes.
    answer = HTTP.get(f"{sandbox.api_url}/webhooks/{webhook.id}", headers={"Authorization": f"Token {K1}"}).json()
    assert answer["data"]["attributes"]["headers"] is None
    assert webhook.headers == [] and webhook.secret == service_secret(sandbox, webhook.id)
    assert stored_secrets(warehouse) == {webhook.id: webhook.secret}
    con = analyst(warehouse)
    row = con.execute("SELECT url, events, headers FROM webhooks WHERE id = ?", [webhook.id]).fetchone()
    con.close()
    assert row == ("https://hooks.example.test/w", ["container.transport.vessel_arrived"], [])


def _in_process(app: Any, warehouse: Path, rewrite: Any) -> tuple[Any, SandboxTransport]:
    settings = load_settings(api_url=IN_PROCESS_URL, api_key=K1, warehouse=warehouse, rate_limit="0", retry_base_delay=0.01)
    return settings, SandboxTransport(app, rewrite)


def test_an_odd_answer_never_loses_the_secret(warehouse: Path) -> None:
    app = create_app(SandboxOptions(api_keys=(K1,), documents=2, rate_limit=None))

    def odd(request: httpx.Request, body: Any) -> Any:
        if request.method == "POST" and request.url.path.endswith("/webhooks"):
            body["data"]["attributes"].update(headers=None, events=None, active="perhaps", url=42, colour="blue")
            body["data"]["relationships"] = [{"weird": True}]
            body["links"] = None
        return body

    settings, transport = _in_process(app, warehouse, odd)
    webhook = register_webhook(settings, "https://hooks.example.test/w", ["container.created"], http_transport=transport)
    secret = app.state.world.accounts[K1].webhooks[webhook.id]["attributes"]["secret"]
    assert stored_secrets(warehouse) == {webhook.id: secret}
    assert webhook.events == [] and webhook.active is None  # unreadable members left at their defaults


def test_an_answer_without_the_secret_reads_it_back(warehouse: Path) -> None:
    app = create_app(SandboxOptions(api_keys=(K1,), documents=2, rate_limit=None))

    def no_secret(request: httpx.Request, body: Any) -> Any:
        if request.method == "POST" and request.url.path.endswith("/webhooks"):
            del body["data"]["attributes"]["secret"]
        return body

    settings, transport = _in_process(app, warehouse, no_secret)
    webhook = register_webhook(settings, "https://hooks.example.test/w", ["container.created"], http_transport=transport)
    assert stored_secrets(warehouse)[webhook.id] == app.state.world.accounts[K1].webhooks[webhook.id]["attributes"]["secret"]
    assert [e.method for e in transport.exchanges if "/webhooks/" in e.path and not e.path.endswith("events")] == ["GET"]


def test_all_43_kinds_are_subscribable(sandbox: RunningSandbox, warehouse: Path) -> None:
    assert len(EVENT_KINDS) == 43 and len(set(EVENT_KINDS)) == 43 and set(SPEC_EVENT_KINDS) < set(EVENT_KINDS)
    settings = settings_for(sandbox, warehouse)
    every = register_webhook(settings, "https://hooks.example.test/all", [], all_events=True)
    assert sorted(every.events) == sorted(EVENT_KINDS)
    newer = register_webhook(settings, "https://hooks.example.test/new", list(NEWER_EVENT_KINDS))
    assert newer.events == list(NEWER_EVENT_KINDS)


def test_kinds_are_checked_against_the_accounts_plan(make_sandbox: SandboxFactory, tmp_path: Path) -> None:
    plan = ("container.transport.vessel_arrived", "document.extracted", "tracking_request.failed")
    sandbox = make_sandbox(plans=((K2, plan),))
    settings = settings_for(sandbox, tmp_path / "w", key=K2)
    with pytest.raises(InputError, match=r"container\.created \(not available to this account\)"):
        register_webhook(settings, "https://hooks.example.test/w", ["container.created"])
    with pytest.raises(InputError, match=r"did you mean document\.extracted"):
        register_webhook(settings, "https://hooks.example.test/w", ["document.extractd"])
    assert not sandbox.state.world.accounts[K2].webhooks
    webhook = register_webhook(settings, "https://hooks.example.test/w", [], all_events=True)
    assert webhook.events == list(plan)


def test_without_an_event_listing_the_43_known_kinds_are_used(warehouse: Path) -> None:
    app = create_app(SandboxOptions(api_keys=(K1,), documents=2, rate_limit=None))
    inner = SandboxTransport(app)

    class NoEventListing(httpx.AsyncBaseTransport):
        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            if request.url.path.endswith("/webhooks/events"):
                return httpx.Response(404, json={"errors": [{"status": "404", "title": "Not Found"}]}, request=request)
            return await inner.handle_async_request(request)

    settings = load_settings(api_url=IN_PROCESS_URL, api_key=K1, warehouse=warehouse, rate_limit="0")
    webhook = register_webhook(settings, "https://hooks.example.test/w", [], all_events=True, http_transport=NoEventListing())
    assert sorted(webhook.events) == sorted(EVENT_KINDS)
    with pytest.raises(InputError, match="did you mean"):
        register_webhook(settings, "https://hooks.example.test/w", ["container.transport.vessel_arived"], http_transport=NoEventListing())
