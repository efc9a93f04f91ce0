"""An account's webhook notifications as the service keeps them for `GET /webhook_notifications`
(api-facts: "for reconciling your data after your endpoint was down"): every notification sent to
one of its webhooks, with its delivery status (`pending`, then `succeeded`, or `failed` once the
retries gave up), whether or not it ever reached the receiver.

Each entry keeps the delivery's body as sent, so a listing serves the same notification (and, with
`include`, the same records) the receiver got or missed. The newest `MAX_KEPT` are kept.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import orjson

MAX_KEPT = 200_000


@dataclass
class Sent:
    notification_id: str
    body: bytes  # the delivery's JSON:API document, as signed and sent
    status: str = "pending"

    def document(self) -> dict[str, Any]:
        """The delivery as the listing shows it: its notification with the current delivery status."""
        document: dict[str, Any] = orjson.loads(self.body)
        document["data"]["attributes"]["delivery_status"] = self.status
        return document


class NotificationLog:
    def __init__(self) -> None:
        self._sent: OrderedDict[str, Sent] = OrderedDict()

    def record(self, notification_id: str, body: bytes) -> None:
        self._sent[notification_id] = Sent(notification_id, body)
        self._sent.move_to_end(notification_id)
        while len(self._sent) > MAX_KEPT:
            self._sent.popitem(last=False)

    def settle(self, notification_id: str, delivered: bool) -> None:
        sent = self._sent.get(notification_id)
        if sent is not None:
            sent.status = "succeeded" if delivered else "failed"

    def get(self, notification_id: str) -> Sent | None:
        return self._sent.get(notification_id)

    def oldest_first(self) -> list[Sent]:
        return list(self._sent.values())

    def newest_first(self) -> list[Sent]:
        return self.oldest_first()[::-1]

    def __len__(self) -> int:
        return len(self._sent)
