"""Registering and deleting webhooks: the webhook lands in the warehouse without its secret; the
secret goes to the local secrets store only.

Kinds are checked against what the account may subscribe to (`GET /webhooks/events`), else the 43
known ones. The secret is taken from the raw answer and stored before anything else reads the
answer: a registration the service accepted is never lost to an odd member of its answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import duckdb
import httpx

from shipsync.api import AsyncShipsyncClient, run_with_client
from shipsync.api.account_models import Webhook
from shipsync.api.jsonapi import JsonObject
from shipsync.api.webhooks import secret_of
from shipsync.config import Settings
from shipsync.errors import ApiError, InputError
from shipsync.warehouse.declared_rows import observed_now
from shipsync.warehouse.ledger import warehouse_run
from shipsync.warehouse.load import write_batch
from shipsync.warehouse.normalize import webhook_columns
from shipsync.warehouse.unit_of_work import CommitContext
from shipsync.webhooks.event_kinds import EVENT_KINDS, unknown_event_kinds
from shipsync.webhooks.secrets_store import forget_secret, save_secret


def parse_headers(pairs: Sequence[str]) -> list[tuple[str, str]]:
    headers = []
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise InputError(f"--header {pair!r}: use NAME=VALUE")
        headers.append((name.strip(), value))
    return headers


def chosen_kinds(events: Sequence[str], all_events: bool, available: Sequence[str] | None) -> list[str]:
    """The kinds to subscribe to, checked against the account's (or, unknown, the 43 known ones)."""
    allowed = list(available) if available else list(EVENT_KINDS)
    kinds = allowed if all_events else list(dict.fromkeys(events))
    if not kinds:
        raise InputError("name the event kinds to receive (--event KIND, repeatable) or use --all-events")
    if bad := unknown_event_kinds(kinds, set(allowed)):
        raise InputError(f"unknown event kind(s): {', '.join(bad)}")
    return kinds


async def _secret_after(client: AsyncShipsyncClient, webhook_id: str) -> str | None:
    """The secret, read back, when the registration's answer did not carry it (reads carry it)."""
    try:
        if secret := secret_of(await client.webhooks.get_raw(webhook_id)):
            return secret
    except ApiError:
        pass
    try:
        listing = await client.webhooks.list_raw()
    except ApiError:
        return None
    return next((secret_of(w) for w in listing if str(w.get("id")) == webhook_id), None)


def register_webhook(
    settings: Settings,
    url: str,
    events: Sequence[str],
    *,
    all_events: bool = False,
    active: bool = True,
    headers: Sequence[tuple[str, str]] = (),
    http_transport: httpx.AsyncBaseTransport | None = None,
) -> Webhook:
    settings.require_api_key()
    parameters = {"url": url, "events": len(events), "all_events": all_events}
    with (
        warehouse_run(settings.lake, "register_webhook", parameters, flow_run_id=settings.flow_run_id) as run,
        run.step("register_webhook", parameters) as record,
    ):

        async def create(client: AsyncShipsyncClient) -> tuple[JsonObject, list[str], str | None]:
            try:
                kinds = chosen_kinds(events, all_events, await client.webhooks.event_kinds())
                raw = await client.webhooks.create_raw(url, kinds, active=active, headers=headers)
                # First thing: the secret to the store, before any model reads the rest of the answer.
                secret = secret_of(raw) or await _secret_after(client, str(raw["id"]))
                if secret:
                    save_secret(settings, str(raw["id"]), secret)
                return raw, kinds, secret
            finally:
                record.add_stats(client.stats)

        raw, kinds, secret = run_with_client(settings.client_options(), create, http_transport=http_transport)
        webhook = Webhook.from_resource(raw)
        webhook.secret = secret
        resource = {
            "id": webhook.id,
            "type": "webhook",
            "links": {"self": webhook.self_link} if webhook.self_link else {},
            "attributes": {
                "url": webhook.url or url,
                "active": webhook.active if webhook.active is not None else active,
                "events": webhook.events or kinds,
                "headers": [h.model_dump() for h in webhook.headers],
                "created_at": webhook.created_at.isoformat() if webhook.created_at else None,
            },
        }
        write_batch(run.warehouse, webhook_columns([resource], observed_at=observed_now()))
        if secret is None:
            record.errors.append(f"webhook {webhook.id} was registered, but the service sent no secret: delete it and register again")
    return webhook


def delete_webhook(settings: Settings, webhook_id: str) -> None:
    settings.require_api_key()
    with (
        warehouse_run(settings.lake, "delete_webhook", {"id": webhook_id}, flow_run_id=settings.flow_run_id) as run,
        run.step("delete_webhook", {"id": webhook_id}) as record,
    ):

        async def delete(client: AsyncShipsyncClient) -> None:
            await client.webhooks.delete(webhook_id)
            record.add_stats(client.stats)

        run_with_client(settings.client_options(), delete)
        forget_secret(settings, webhook_id)
        deleted_at = datetime.now(UTC)

        def mark_deleted(con: duckdb.DuckDBPyConnection, commit: CommitContext) -> None:
            con.execute("UPDATE webhooks SET active = false, deleted_at = ? WHERE id = ?", [deleted_at, webhook_id])

        run.warehouse.defer(["webhooks"], mark_deleted)
