"""Webhooks: register (POST) and delete (spec); list, read, change, the account's event kinds and
its notifications (documented extensions).

A registration's answer is kept raw first: its `secret` must reach the secrets store whatever the
rest of the answer looks like (a `headers: null`, an unknown member) — see `create_raw`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from shipsync.api.account_models import Webhook
from shipsync.api.jsonapi import JsonObject, Pages, resource_document
from shipsync.api.transport import Transport
from shipsync.errors import ApiError, AuthenticationError, RateLimitedError


def secret_of(resource: JsonObject) -> str | None:
    """The webhook secret from a raw resource, before any model sees it."""
    attributes = resource.get("attributes")
    secret = attributes.get("secret") if isinstance(attributes, dict) else None
    return secret if isinstance(secret, str) and secret else None


def kinds_of_categories(resources: Iterable[JsonObject]) -> list[str] | None:
    """Event kind names from `webhook_event_category` resources (`attributes.events[].name`).

    None when a category cannot be read whole (no events list, an event without a name): a list
    we cannot read whole must not make known kinds look unavailable.
    """
    kinds: list[str] = []
    for resource in resources:
        attributes = resource.get("attributes")
        events = attributes.get("events") if isinstance(attributes, dict) else None
        if not isinstance(events, list):
            return None
        for event in events:
            name = event.get("name") if isinstance(event, dict) else event
            if not isinstance(name, str) or not name:
                return None
            kinds.append(name)
    return list(dict.fromkeys(kinds)) or None


@dataclass(frozen=True)
class TestDelivery:
    """What `POST /webhooks/trigger` answers: how the one test delivery to `url` went."""

    url: str
    succeeded: bool
    status_code: int | None
    error: str | None

    @classmethod
    def from_answer(cls, answer: Any, url: str) -> TestDelivery:
        found = answer if isinstance(answer, dict) else {}
        status = found.get("status_code")
        error = found.get("error")
        return cls(
            str(found.get("url") or url),
            found.get("succeeded") is True,
            status if isinstance(status, int) and not isinstance(status, bool) else None,
            str(error) if error is not None else None,
        )


@dataclass(frozen=True)
class DeliveryAddresses:
    """What `GET /webhooks/ips` answers: the IPv4 addresses deliveries come from, and when the
    service last changed the list."""

    addresses: list[str]
    last_updated: str | None

    @classmethod
    def from_answer(cls, answer: Any) -> DeliveryAddresses:
        found = answer if isinstance(answer, dict) else {}
        listed = found.get("webhook_notification_ips")
        updated = found.get("last_updated")
        addresses = [str(a) for a in listed if isinstance(a, str)] if isinstance(listed, list) else []
        return cls(addresses, updated if isinstance(updated, str) else None)


class Webhooks:
    def __init__(self, transport: Transport) -> None:
        self._t = transport

    async def event_kinds(self) -> list[str] | None:
        """Extension: the kinds this account may subscribe to; None when the service does not say."""
        try:
            page = await self._t.get_page("webhooks/events")
        except (AuthenticationError, RateLimitedError):
            raise
        except ApiError:  # not offered (404), refused or unreadable: fall back to the known kinds
            return None
        return kinds_of_categories(page.data)

    async def create_raw(
        self,
        url: str,
        events: Iterable[str],
        *,
        active: bool = True,
        headers: Iterable[tuple[str, str]] = (),
    ) -> JsonObject:
        """Register; return the answer's resource as sent (take the secret from it with `secret_of`).
        The service judges the kinds (422 for one it does not offer); `webhooks.registration`
        checks them against the known ones first, with a suggestion for a misspelt one."""
        event_list = list(events)
        if not event_list:
            raise ValueError("a webhook needs at least one event kind")
        attributes: dict[str, Any] = {"url": url, "events": event_list, "active": active}
        header_list = [{"name": n, "value": v} for n, v in headers]
        if header_list:
            attributes["headers"] = header_list
        return await self._t.write_one("POST", "webhooks", resource_document("webhook", attributes))

    async def create(self, url: str, events: Iterable[str], **options: Any) -> Webhook:
        return Webhook.from_resource(await self.create_raw(url, events, **options))

    async def get_raw(self, webhook_id: str) -> JsonObject:
        return (await self._t.get_page(f"webhooks/{quote(webhook_id, safe='')}")).data[0]

    async def get(self, webhook_id: str) -> Webhook:
        return Webhook.from_resource(await self.get_raw(webhook_id))

    async def list_raw(self) -> list[JsonObject]:
        """Extension: every webhook of the account, as sent (a listing carries each secret)."""
        return [r async for page in self._t.paginate("webhooks") for r in page.data]

    async def update(self, webhook_id: str, attributes: dict[str, Any]) -> Webhook:
        """Extension: change `url`, `events`, `active` or `headers`."""
        body = resource_document("webhook", attributes)
        body["data"]["id"] = webhook_id
        return Webhook.from_resource(await self._t.write_one("PATCH", f"webhooks/{quote(webhook_id, safe='')}", body))

    async def activate(self, webhook_id: str) -> Webhook:
        """Turn a webhook on again (`PATCH /webhooks/{id}`, `active: true`), e.g. after the service
        deactivated it for failing deliveries."""
        return await self.update(webhook_id, {"active": True})

    async def trigger(self, url: str, event: str, *, secret: str | None = None) -> TestDelivery:
        """One test delivery of an example `event` to `url` (`POST /webhooks/trigger`, a plain JSON
        body), signed with `secret` when given; no webhook is created."""
        body: dict[str, Any] = {"url": url, "event": event}
        if secret:
            body["secret"] = secret
        return TestDelivery.from_answer(await self._t.request("POST", "webhooks/trigger", json_body=body), url)

    async def delivery_addresses(self) -> DeliveryAddresses:
        """The addresses the service delivers from (`GET /webhooks/ips`), for a firewall's allow list."""
        return DeliveryAddresses.from_answer(await self._t.request("GET", "webhooks/ips"))

    async def delete(self, webhook_id: str) -> None:
        await self._t.request("DELETE", f"webhooks/{quote(webhook_id, safe='')}")

    def notification_pages(self, *, include: str | None = None, max_pages: int | None = None, start: str | None = None) -> Pages:
        """Every notification sent to the account's webhooks (`GET /webhook_notifications`, delivered
        or not, in an order the reference does not state), each the `webhook_notification` resource
        a delivery carries; `include` takes `webhook` and `reference_object`."""
        params = {"include": include} if include else {}
        return self._t.paginate("webhook_notifications", params, max_pages=max_pages, start=start)
