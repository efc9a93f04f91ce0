"""Webhook deliveries as the change feed of shipments and containers: when they are current,
`pull all` leaves the listings to the weekly full passes; when not, it walks them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from shipsync.pull.change_feed import FED_KINDS, webhooks_feed_changes
from shipsync.pull.everything import pull_all
from shipsync.webhooks.event_kinds import EVENT_KINDS
from support.lake import analyst, sql_now
from support.sandboxes import RunningSandbox, settings_for

NOW = datetime(2026, 11, 23, 12, tzinfo=UTC)


def _warehouse(path: Path, events: list[str] | None, received: datetime | None, active: bool = True) -> Path:
    sql_now(path, "SELECT 1")  # the lake, with its tables
    if events is not None:
        sql_now(path, "INSERT INTO webhooks (id, url, active, events) VALUES ('w-1', 'http://x/webhook', ?, ?)", [active, events])
    if received is not None:
        sql_now(path, "INSERT INTO webhook_events (notification_id, event, received_at) VALUES ('n-1', 'container.updated', ?)", [received])
    return path


@pytest.mark.parametrize(
    ("events", "received", "active", "current"),
    [
        (list(EVENT_KINDS), NOW - timedelta(hours=3), True, True),
        (sorted(FED_KINDS), NOW - timedelta(hours=23), True, True),
        (list(EVENT_KINDS), NOW - timedelta(days=2), True, False),  # the receiver stopped, or a quiet account
        (list(EVENT_KINDS), None, True, False),  # nothing received yet
        (["container.transport.vessel_arrived"], NOW - timedelta(hours=1), True, False),  # not every change is pushed
        (list(EVENT_KINDS), NOW - timedelta(hours=1), False, False),  # paused
        (None, NOW - timedelta(hours=1), True, False),  # no webhook at all
    ],
)
def test_deliveries_are_a_feed_only_when_current_and_complete(
    tmp_path: Path, events: list[str] | None, received: datetime | None, active: bool, current: bool
) -> None:
    warehouse = _warehouse(tmp_path / "w", events, received, active)
    with analyst(warehouse) as con:
        assert webhooks_feed_changes(con, now=NOW) is current


@pytest.mark.slow
def test_pull_all_leaves_the_listings_to_a_current_feed(sandbox: RunningSandbox, warehouse: Path) -> None:
    settings = settings_for(sandbox, warehouse)
    assert {"pull_shipments", "pull_containers"} <= {r.flow for r in pull_all(settings)}
    _warehouse(warehouse, list(EVENT_KINDS), datetime.now(UTC) - timedelta(minutes=5))
    fed = pull_all(settings)
    assert not {"pull_shipments", "pull_containers"} & {r.flow for r in fed}
    assert sum(r.stats.requests for r in fed) <= 3  # new documents, tracking requests (each one page)
    forced = pull_all(settings, force=True)
    assert {"pull_shipments", "pull_containers"} <= {r.flow for r in forced}
