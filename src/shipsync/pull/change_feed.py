"""Whether webhook deliveries are a current change feed for shipments and containers, so that the
daily `pull all` can leave their listings to the weekly full passes.

Current means: an active webhook registered through shipsync takes every container and shipment
event kind, and the event log received a delivery within the last day. A receiver
that stopped, a webhook deleted or narrowed, or an account quiet for a day makes `pull all` walk the
listings again, so a lost delivery is found within a day, not a week.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import duckdb

from shipsync.webhooks.event_kinds import EVENT_KINDS

QUIET_LIMIT = timedelta(days=1)
FED_KINDS = frozenset(k for k in EVENT_KINDS if k.startswith(("container.", "shipment.")))


def webhooks_feed_changes(con: duckdb.DuckDBPyConnection, now: datetime | None = None) -> bool:
    hooks = con.execute("SELECT events FROM webhooks WHERE coalesce(active, true) AND deleted_at IS NULL").fetchall()
    last = con.execute("SELECT max(received_at) FROM webhook_events").fetchone()
    covered = any(set(events or ()) >= FED_KINDS for (events,) in hooks)
    received = last[0] if last else None
    return covered and received is not None and (now or datetime.now(UTC)) - received < QUIET_LIMIT
