"""Listed notifications under the delivery limits (issue 36, item 4): a notification the service's
listing carries nested past the depth a delivery may have, or larger than a delivery may be, is a
dead letter under its id (as the receiver would have refused the delivery), never a crash of
`events catch-up`; the notifications beside it load, the "no gap until" mark moves on, and the
next catch-up counts the dead letters as settled instead of taking them again."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from shipsync.cli import app
from shipsync.config import Settings
from shipsync.webhooks.body_limits import MAX_BODY_BYTES, MAX_DEPTH, MAX_VALUES
from shipsync.webhooks.catch_up import KEPT_OF_TOO_LARGE, catch_up
from shipsync.webhooks.registration import register_webhook
from shipsync_sandbox.serving import free_port
from support.sandboxes import K1, RunningSandbox, SandboxFactory, settings_for
from support.warehouse_rows import rows


def listed(sandbox: RunningSandbox, webhook_id: str, notification_id: str, minutes_ago: int, **attributes: object) -> None:
    """A notification in the service's listing (sent to a webhook nobody listened at)."""
    created = (datetime.now(UTC) - timedelta(minutes=minutes_ago)).isoformat().replace("+00:00", "Z")
    body = {
        "data": {
            "id": notification_id,
            "type": "webhook_notification",
            "attributes": {"event": "container.updated", "delivery_status": "failed", "created_at": created, **attributes},
            "relationships": {"webhook": {"data": {"type": "webhook", "id": webhook_id}}, "reference_object": {"data": None}},
        },
        "included": [],
    }
    sandbox.state.world.accounts[K1].notifications.record(notification_id, json.dumps(body).encode())  # orjson stops at 254 levels


def nested(depth: int) -> object:
    value: object = "bottom"
    for _ in range(depth):
        value = {"deeper": value}
    return value


@pytest.fixture
def hostile_listing(make_sandbox: SandboxFactory, tmp_path: Path) -> tuple[Settings, dict[str, str]]:
    """A warehouse with a webhook of its own, and the service's listing of its notifications: two
    plain ones around a deep one, a huge one and one of too many values."""
    sandbox = make_sandbox(documents=2)
    settings = settings_for(sandbox, tmp_path / "warehouse")
    webhook = register_webhook(settings, f"http://127.0.0.1:{free_port()}/webhook", [], all_events=True)
    kinds = {
        "ntf-plain-old": {},
        "ntf-deep": {"extra": nested(300)},
        "ntf-huge": {"extra": "x" * (5 * 1024 * 1024)},
        "ntf-many-values": {"extra": list(range(MAX_VALUES + 10))},
        "ntf-plain-new": {},
    }
    for minutes_ago, (notification_id, attributes) in zip(range(len(kinds), 0, -1), kinds.items(), strict=True):
        listed(sandbox, webhook.id, notification_id, minutes_ago, **attributes)
    return settings, {"deep": "ntf-deep", "huge": "ntf-huge", "values": "ntf-many-values"}


def test_listed_notifications_past_the_delivery_limits_are_dead_letters_and_the_mark_moves(
    hostile_listing: tuple[Settings, dict[str, str]],
) -> None:
    settings, refused = hostile_listing
    done = catch_up(settings)
    assert done.walk is not None and done.walk.listed == 5 and done.whole_until is not None
    assert (done.loaded, done.dead_letters) == (2, 3)
    assert rows(settings, "SELECT notification_id FROM webhook_events ORDER BY 1") == [
        {"notification_id": "ntf-plain-new"},
        {"notification_id": "ntf-plain-old"},
    ]
    letters = rows(settings, "SELECT notification_id AS id, reason, octet_length(body) AS size FROM webhook_dead_letters")
    dead = {r["id"]: (r["reason"], r["size"]) for r in letters}
    assert set(dead) == set(refused.values())
    assert f"(at most {MAX_DEPTH})" in dead["ntf-deep"][0]
    assert f"(at most {MAX_BODY_BYTES:,}, as a delivery)" in dead["ntf-huge"][0] and dead["ntf-huge"][1] == KEPT_OF_TOO_LARGE
    assert f"(at most {MAX_VALUES:,})" in dead["ntf-many-values"][0]
    assert rows(settings, "SELECT max(strlen(CAST(payload AS VARCHAR))) AS size FROM webhook_events")[0]["size"] < MAX_BODY_BYTES

    again = catch_up(settings)  # the dead letters are settled: not taken again, the mark moves on
    assert again.walk is not None and (again.loaded, again.dead_letters, again.walk.known) == (0, 0, 5)
    assert again.whole_until is not None and again.whole_until > done.whole_until  # type: ignore[operator]
    assert rows(settings, "SELECT count(*) AS n FROM webhook_dead_letters") == [{"n": 3}]


def test_events_catch_up_ends_quietly_on_a_hostile_listing(hostile_listing: tuple[Settings, dict[str, str]]) -> None:
    settings, _ = hostile_listing
    env = {
        "SHIPSYNC_API_URL": settings.api_url,
        "SHIPSYNC_API_KEY": K1,
        "SHIPSYNC_WAREHOUSE": settings.warehouse,
        "SHIPSYNC_RATE_LIMIT": "0",
        "COLUMNS": "300",
    }
    done = CliRunner().invoke(app, ["events", "catch-up"], env=env)
    assert done.exit_code == 0, done.output
    assert "Traceback" not in done.output and "3 dead-lettered" in done.output and "no gap until" in done.output, done.output
