"""Registering and deleting webhooks: the webhook lands in the warehouse without its secret; the
secret goes to the local secrets store only."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import UTC, datetime

from shipsync.api import AsyncShipsyncClient
from shipsync.api.models import Webhook
from shipsync.api.webhooks import EVENT_KINDS, unknown_event_kinds
from shipsync.config import Settings
from shipsync.errors import InputError
from shipsync.pull.run import ledger_run
from shipsync.warehouse.connection import connect, transaction
from shipsync.warehouse.load import write_batch_with
from shipsync.warehouse.normalize import webhook_columns
from shipsync.webhooks.secrets_store import forget_secret, save_secret


def parse_headers(pairs: Sequence[str]) -> list[tuple[str, str]]:
    headers = []
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise InputError(f"--header {pair!r}: use NAME=VALUE")
        headers.append((name.strip(), value))
    return headers


def register_webhook(
    settings: Settings,
    url: str,
    events: Sequence[str],
    *,
    all_events: bool = False,
    active: bool = True,
    headers: Sequence[tuple[str, str]] = (),
) -> Webhook:
    kinds = list(EVENT_KINDS) if all_events else list(dict.fromkeys(events))
    if not kinds:
        raise InputError("name the event kinds to receive (--event KIND, repeatable) or use --all-events")
    if bad := unknown_event_kinds(kinds):
        raise InputError(f"unknown event kind(s): {', '.join(bad)}")
    with ledger_run(settings, "register_webhook", {"url": url, "events": len(kinds), "active": active}) as record:

        async def create() -> Webhook:
            async with AsyncShipsyncClient.from_settings(settings) as client:
                webhook = await client.webhooks.create(url, kinds, active=active, headers=headers)
                record.add_stats(client.stats)
                return webhook

        webhook = asyncio.run(create())
        if webhook.secret:
            save_secret(settings, webhook.id, webhook.secret)
        resource = {
            "id": webhook.id,
            "type": "webhook",
            "links": {"self": webhook.self_link} if webhook.self_link else {},
            "attributes": {
                "url": webhook.url,
                "active": webhook.active,
                "events": webhook.events,
                "headers": [h.model_dump() for h in webhook.headers],
            },
        }
        with connect(settings.warehouse) as con, transaction(con):
            write_batch_with(con, webhook_columns([resource]), run_id=record.run_id)
    return webhook


def delete_webhook(settings: Settings, webhook_id: str) -> None:
    with ledger_run(settings, "delete_webhook", {"id": webhook_id}) as record:

        async def delete() -> None:
            async with AsyncShipsyncClient.from_settings(settings) as client:
                await client.webhooks.delete(webhook_id)
                record.add_stats(client.stats)

        asyncio.run(delete())
        forget_secret(settings, webhook_id)
        with connect(settings.warehouse) as con:
            con.execute("UPDATE webhooks SET active = false, deleted_at = ? WHERE id = ?", [datetime.now(UTC), webhook_id])
