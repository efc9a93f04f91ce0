"""The sandbox delivers webhook notifications like the service: a JSON:API envelope, signed with the
webhook's secret (api-facts: `X-T49-Webhook-Signature`, the lowercase hex HMAC-SHA256 of the raw
body), POSTed to its URL, retried with backoff up to 12 times until answered 2xx. Every
notification is also kept in the account's log (`GET /webhook_notifications`) with how its
delivery went. A webhook that keeps failing is deactivated (api-facts: "may be deactivated"; the
reference says no more): after `deactivate_after` notifications in a row whose every retry failed,
its `active` turns false and it hears nothing until a PATCH turns it on again."""

from __future__ import annotations

import asyncio
import functools
import hashlib
import hmac
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx
import orjson

from shipsync_sandbox.jsonapi_http import render
from shipsync_sandbox.resources import stable_id
from shipsync_sandbox.world import Account

ACCEPTED = {200, 201, 202, 204}
MAX_RETRIES = 12


@dataclass
class DeliveryStats:
    notifications: int = 0
    delivered: int = 0
    attempts: int = 0
    gave_up: int = 0


def signature(secret: str, body: bytes) -> str:
    return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def envelope(
    webhook_id: str,
    event: str,
    reference: dict[str, Any],
    included: list[dict[str, Any]],
    created_at: str | None = None,
    notification_id: str | None = None,
) -> dict[str, Any]:
    notification_id = notification_id or str(uuid.uuid4())
    return {
        "data": {
            "id": notification_id,
            "type": "webhook_notification",
            "attributes": {
                "id": notification_id,
                "event": event,
                "delivery_status": "pending",
                "created_at": created_at or datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            },
            "relationships": {
                "webhook": {"data": {"id": webhook_id, "type": "webhook"}},
                "reference_object": {"data": {"id": reference["id"], "type": reference["type"]}},
            },
        },
        "included": included,
    }


def delivery(
    account: Account,
    position: int,
    webhook_id: str,
    event: str,
    reference: dict[str, Any],
    included: list[dict[str, Any]],
    created_at: str | None,
) -> dict[str, Any]:
    """The notification the account's `position`th webhook receives: the reference object first in
    `included`, then the records it names."""
    # The same event to the same address is the same notification (so a re-run duplicates, not doubles).
    # Journeys carry their own timestamps; other events (a PATCH, an undo) are new each time.
    notification_id = stable_id("notification", account.id, position, event, reference["id"], created_at) if created_at else None
    return envelope(webhook_id, event, reference, [reference, *included], created_at, notification_id)


class Deliverer:
    def __init__(self, retry_base_s: float = 0.5, deactivate_after: int | None = 10) -> None:
        self.retry_base_s = retry_base_s
        self.deactivate_after = deactivate_after
        self.stats = DeliveryStats()
        self.stats_by_account: dict[str, DeliveryStats] = {}
        self._tasks: set[asyncio.Task[bool]] = set()
        self._pending_by_account: dict[str, int] = {}
        self._client: httpx.AsyncClient | None = None
        # Where the sandbox is served (set by its app from the requests it answers): the records a
        # delivery includes link to it, as its answers do.
        self.base: str | None = None

    def emit(
        self, account: Account, event: str, reference: dict[str, Any], included: list[dict[str, Any]], created_at: str | None = None
    ) -> None:
        """Queue a notification to every active webhook of the account that takes this kind."""
        for position, webhook in enumerate(list(account.webhooks.values())):
            attributes = webhook["attributes"]
            if not attributes["active"] or event not in attributes["events"]:
                continue
            document = delivery(account, position, webhook["id"], event, reference, included, created_at)
            if self.base is not None:
                document["included"] = [render(r, self.base) for r in document["included"]]
            body = orjson.dumps(document)
            notification_id = document["data"]["id"]
            account.notifications.record(notification_id, body)
            headers = {h["name"]: h["value"] for h in attributes.get("headers") or []}
            headers["X-T49-Webhook-Signature"] = signature(attributes["secret"], body)
            headers["Content-Type"] = "application/json"
            mine = self.stats_by_account.setdefault(account.id, DeliveryStats())
            for stats in (self.stats, mine):
                stats.notifications += 1
            self._pending_by_account[account.id] = self._pending_by_account.get(account.id, 0) + 1
            sending = self._deliver(attributes["url"], body, headers, (self.stats, mine))
            task = asyncio.get_running_loop().create_task(sending)
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
            task.add_done_callback(functools.partial(self._done, account, webhook, notification_id))

    def _done(self, account: Account, webhook: dict[str, Any], notification_id: str, task: asyncio.Task[bool]) -> None:
        self._pending_by_account[account.id] -= 1
        if task.cancelled():
            return
        delivered = task.result()
        account.notifications.settle(notification_id, delivered=delivered)
        failures = 0 if delivered else account.failures_in_a_row.get(webhook["id"], 0) + 1
        account.failures_in_a_row[webhook["id"]] = failures
        if self.deactivate_after is not None and failures >= self.deactivate_after:
            webhook["attributes"] = {**webhook["attributes"], "active": False}

    async def _deliver(self, url: str, body: bytes, headers: dict[str, str], counters: tuple[DeliveryStats, ...]) -> bool:
        """Send until answered 2xx (True) or the retries give up (False)."""
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=10, limits=httpx.Limits(max_connections=16))
        for attempt in range(MAX_RETRIES + 1):
            for stats in counters:
                stats.attempts += 1
            try:
                response = await self._client.post(url, content=body, headers=headers)
                if response.status_code in ACCEPTED:
                    for stats in counters:
                        stats.delivered += 1
                    return True
            except httpx.HTTPError:
                pass
            await asyncio.sleep(min(60.0, self.retry_base_s * 2**attempt))
        for stats in counters:
            stats.gave_up += 1
        return False

    @property
    def pending(self) -> int:
        return len(self._tasks)

    def pending_of(self, account_id: str) -> int:
        return self._pending_by_account.get(account_id, 0)
