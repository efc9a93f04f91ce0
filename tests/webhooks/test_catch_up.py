"""`events catch-up` against the sandbox: the notifications a receiver never got, listed by the
service, land in the event log once, as a delivery would have put them; a delivery that comes after
takes the listed copy's place without a conflict; a listed copy of a delivered notification changes
nothing; the walk stops where the log has no gap, and leaves other webhooks' notifications out."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from shipsync.api.jsonapi import Page
from shipsync.cli import app
from shipsync.config import Settings
from shipsync.warehouse.unit_of_work import open_warehouse
from shipsync.webhooks.catch_up import MARGIN, Walk, catch_up, default_start, no_gap
from shipsync.webhooks.event_log import EventLogStage
from shipsync.webhooks.framing import encode_record
from shipsync.webhooks.load import load_events
from shipsync.webhooks.registration import register_webhook
from shipsync_sandbox.admin_client import wait_for_deliveries
from shipsync_sandbox.deliver import envelope
from shipsync_sandbox.serving import free_port
from shipsync_sandbox.views import tracking_request_view
from support.http import HTTP
from support.lake import fetch, location
from support.sandboxes import K1, RunningSandbox, SandboxFactory, settings_for

# The columns a transport event's row takes from the notification that brought it; the rest say
# when this lake wrote it.
WRITTEN_BY_THE_LAKE = ("_synced_at", "_run_id", "first_seen_at", "last_changed_at")


def missed(sandbox: RunningSandbox, settings: Settings, containers: int = 2) -> list[bytes]:
    """Journeys delivered to a webhook nobody listens at, until the sandbox gives up: the bodies it sent."""
    register_webhook(settings, f"http://127.0.0.1:{free_port()}/webhook", [], all_events=True)
    HTTP.post(f"{sandbox.server.url}/_admin/simulate", params={"containers": containers}, headers={"Authorization": f"Token {K1}"})
    stats = wait_for_deliveries(sandbox.server.url, K1)
    assert stats["notifications"] > 0 and stats["gave_up"] == stats["notifications"], stats
    return [sent.body for sent in sandbox.state.world.accounts[K1].notifications.newest_first()]


def delivered(tmp_path: Path, bodies: list[bytes]) -> Path:
    """A spool holding `bodies` as a receiver would have stored them."""
    spool = tmp_path / f"spool-{len(list(tmp_path.glob('spool-*')))}"
    spool.mkdir(mode=0o700)
    (spool / "segment-00000000000000000000-1.spool").write_bytes(b"".join(encode_record(body, 0) for body in bodies))
    return spool


@pytest.fixture
def outage(make_sandbox: SandboxFactory, tmp_path: Path) -> tuple[RunningSandbox, Settings, list[bytes]]:
    sandbox = make_sandbox(delivery_retry_base_s=0.0)
    settings = settings_for(sandbox, tmp_path / "warehouse")
    return sandbox, settings, missed(sandbox, settings)


def ids_of(bodies: list[bytes]) -> list[str]:
    return [orjson.loads(body)["data"]["id"] for body in bodies]


@pytest.mark.slow
def test_missed_notifications_land_once_with_the_typed_rows_a_delivery_makes(
    outage: tuple[RunningSandbox, Settings, list[bytes]], tmp_path: Path
) -> None:
    sandbox, settings, bodies = outage
    done = catch_up(settings)
    assert done.walk is not None and (done.loaded, done.walk.listed, done.walk.known) == (len(bodies), len(bodies), 0)
    assert done.whole_until is not None
    logged = fetch(settings, "SELECT notification_id, received_at, listed_at, delivery_status FROM webhook_events")
    assert sorted(r[0] for r in logged) == sorted(ids_of(bodies))
    assert {(r[1], r[3]) for r in logged} == {(None, "failed")} and all(r[2] is not None for r in logged)

    again = catch_up(settings)  # nothing new: every one is known
    assert again.walk is not None and (again.loaded, again.walk.known) == (0, len(bodies))
    assert fetch(settings, "SELECT count(*) FROM webhook_events") == [(len(bodies),)]

    # The same notifications delivered to another lake: the typed rows the listing carries (each
    # notification's reference object) are the same rows, stamped the same.
    reference = settings_for(sandbox, tmp_path / "delivered")
    assert load_events(reference.lake, delivered(tmp_path, bodies)).loaded == len(bodies)
    columns = [r[0] for r in fetch(settings, "SELECT column_name FROM (DESCRIBE transport_events)") if r[0] not in WRITTEN_BY_THE_LAKE]
    typed = f"SELECT {', '.join(columns)} FROM transport_events ORDER BY id"
    listed_rows, delivered_rows = fetch(settings, typed), fetch(reference, typed)
    assert listed_rows and listed_rows == delivered_rows
    assert fetch(settings, "SELECT count(*) FROM transport_events WHERE last_event_id IS NULL") == [(0,)]


@pytest.mark.slow
def test_a_delivery_after_the_listing_takes_its_place_and_a_listing_after_a_delivery_changes_nothing(
    outage: tuple[RunningSandbox, Settings, list[bytes]], tmp_path: Path
) -> None:
    sandbox, settings, bodies = outage
    catch_up(settings)
    spool = delivered(tmp_path, bodies)
    report = load_events(settings.lake, spool)
    # Their bodies differ from the listed copies (delivery status, included resources): no conflict.
    assert (report.loaded, report.delivered_after_listing, report.conflicts, report.duplicates) == (0, len(bodies), 0, 0)
    assert fetch(settings, "SELECT count(*) FROM webhook_events WHERE received_at IS NULL OR listed_at IS NULL") == [(0,)]
    assert fetch(settings, "SELECT DISTINCT delivery_status, payload->>'$.data.attributes.delivery_status' FROM webhook_events") == [
        ("pending", "pending")
    ]
    # The delivery's included resources replace the listed ones: containers and shipments too now.
    included = fetch(settings, "SELECT DISTINCT type FROM webhook_event_resources ORDER BY type")
    assert {"container", "shipment"} <= {r[0] for r in included}
    assert fetch(
        settings, "SELECT count(*) FROM (SELECT notification_id, type, id FROM webhook_event_resources GROUP BY ALL HAVING count(*) > 1)"
    ) == [(0,)]
    assert fetch(settings, "SELECT count(*) FROM containers WHERE last_event_id IS NOT NULL")[0][0] > 0
    # Delivered again: now a redelivery of the delivered body.
    again = load_events(settings.lake, delivered(tmp_path, bodies))
    assert (again.loaded, again.duplicates, again.conflicts, again.delivered_after_listing) == (0, len(bodies), 0, 0)

    # The other way round: delivered first, then listed. The listed copies are known: no conflict, no row.
    other = settings_for(sandbox, tmp_path / "delivered-first")
    load_events(other.lake, delivered(tmp_path, bodies))
    register_webhook(other, "http://127.0.0.1:9/unused", ["container.created"])  # the lake's own webhook, so the listing is walked
    listed = catch_up(other)
    assert listed.walk is not None and (listed.loaded, listed.walk.known) == (0, len(bodies))
    assert fetch(other, "SELECT count(*) FROM webhook_event_conflicts") == [(0,)]
    assert fetch(other, "SELECT count(*) FROM webhook_events WHERE listed_at IS NOT NULL") == [(0,)]


@pytest.mark.slow
def test_notifications_of_webhooks_that_are_not_the_warehouses_are_left_out(make_sandbox: SandboxFactory, tmp_path: Path) -> None:
    sandbox = make_sandbox(delivery_retry_base_s=0.0)
    elsewhere = settings_for(sandbox, tmp_path / "elsewhere")
    bodies = missed(sandbox, elsewhere, containers=1)  # another integration's webhook on the same account
    settings = settings_for(sandbox, tmp_path / "warehouse")
    nothing = catch_up(settings)
    assert nothing.walk is None and nothing.requests == 0  # the warehouse knows no webhook: nothing is listed
    register_webhook(settings, "http://127.0.0.1:9/unused", ["container.created"])
    done = catch_up(settings)
    assert done.walk is not None and (done.loaded, done.walk.foreign) == (0, len(bodies))


@pytest.mark.slow
def test_without_since_it_lists_from_the_last_gap_free_moment(outage: tuple[RunningSandbox, Settings, list[bytes]]) -> None:
    _, settings, _ = outage
    with open_warehouse(settings.lake) as warehouse:
        registered = warehouse.con.execute("SELECT min(first_seen_at) FROM webhooks").fetchone()[0]  # type: ignore[index]
        assert no_gap(warehouse.con) is None and default_start(warehouse.con) == registered - MARGIN
    done = catch_up(settings)
    with open_warehouse(settings.lake) as warehouse:
        found = no_gap(warehouse.con)
        assert found is not None and found.until == done.whole_until == found.caught_up and found.delivered is None
        assert default_start(warehouse.con) == found.until - MARGIN
    status = CliRunner().invoke(app, ["status"], env={"SHIPSYNC_WAREHOUSE": str(settings.warehouse), "COLUMNS": "200"})
    assert status.exit_code == 0 and f"event log: no gap until {found.until:%Y-%m-%d %H:%M:%S} UTC" in status.output


def _page(*notifications: tuple[str, str, datetime]) -> Page:
    data = [
        {
            "id": notification_id,
            "type": "webhook_notification",
            "attributes": {"event": "container.created", "created_at": made.isoformat()},
            "relationships": {"webhook": {"data": {"type": "webhook", "id": webhook}}},
        }
        for notification_id, webhook, made in notifications
    ]
    return Page(data, [], {}, {})


def test_the_walk_ends_on_the_first_page_settled_and_older_than_its_start(tmp_path: Path) -> None:
    start = datetime(2026, 5, 1, tzinfo=UTC)
    earlier, before, after, later = (start + timedelta(hours=h) for h in (-2, -1, 1, 2))
    with open_warehouse(location(tmp_path / "lake")) as warehouse:
        spool = delivered(tmp_path, [orjson.dumps({"data": {"id": "known", "type": "webhook_notification"}})])
        stage = EventLogStage(warehouse, datetime.now(UTC), "listing", listed=True)
        walk = Walk(warehouse.con, stage, frozenset({"ours"}), start, "run")
        assert not walk.last_page(_page(("new-1", "theirs", later), ("new-2", "theirs", after)))  # newer than the start
        assert not walk.last_page(_page(("unknown", "ours", before), ("theirs-1", "theirs", before)))  # the log lacks one: walk on
        assert walk.last_page(_page(("theirs-2", "theirs", before), ("theirs-3", "theirs", earlier)))  # another webhook's, older
        assert not walk.last_page(_page())  # an empty page ends nothing (the listing's end does)
    load_events(location(tmp_path / "lake"), spool)
    with open_warehouse(location(tmp_path / "lake")) as warehouse:

        def walk_of() -> Walk:
            stage = EventLogStage(warehouse, datetime.now(UTC), "listing", listed=True)
            return Walk(warehouse.con, stage, frozenset({"ours"}), start, "run")

        assert walk_of().last_page(_page(("known", "ours", before), ("theirs", "theirs", earlier)))
        assert not walk_of().last_page(_page(("known", "ours", before), ("late", "ours", earlier)))
        # Pages that do not show the listing newest first never end the walk: below may be newer.
        assert not walk_of().last_page(_page(("known", "ours", before)))  # one notification shows no order
        rising = walk_of()
        assert not rising.last_page(_page(("theirs-1", "theirs", earlier), ("theirs-2", "theirs", before)))
        assert not rising.last_page(_page(("theirs-3", "theirs", earlier), ("theirs-4", "theirs", earlier - timedelta(hours=1))))
        across = walk_of()  # each page falls, but the second starts above where the first ended
        assert not across.last_page(_page(("unknown", "ours", before), ("theirs-6", "theirs", earlier)))
        assert not across.last_page(_page(("theirs-7", "theirs", before), ("theirs-8", "theirs", earlier - timedelta(hours=1))))


def _record_notifications(sandbox: RunningSandbox, webhook_id: str, stamps: list[datetime]) -> list[str]:
    """Notifications the service sent to `webhook_id` at `stamps` (in that order) that no receiver
    got: in the account's listing only. Their reference object is one of the account's tracking requests."""
    account = sandbox.state.world.accounts[K1]
    reference = tracking_request_view(account, next(iter(account.tracking_requests.values())))
    ids = []
    for made in stamps:
        document = envelope(webhook_id, "tracking_request.succeeded", reference, [reference], made.strftime("%Y-%m-%dT%H:%M:%SZ"))
        account.notifications.record(document["data"]["id"], orjson.dumps(document))
        ids.append(document["data"]["id"])
    return ids


@pytest.mark.parametrize("order", ["newest", "oldest", "id"])
def test_a_catch_up_loads_every_missed_notification_whatever_the_listing_order(
    make_sandbox: SandboxFactory, tmp_path: Path, order: str
) -> None:
    """150 notifications the log holds, then 65 it missed, listed in one order (215: three pages).
    Every missed one is loaded under every order; only newest first lets the walk stop early."""
    sandbox = make_sandbox(listing_order=order)
    settings = settings_for(sandbox, tmp_path / "warehouse")
    webhook = register_webhook(settings, f"http://127.0.0.1:{free_port()}/webhook", ["tracking_request.succeeded"])
    now = datetime.now(UTC).replace(microsecond=0)
    held = _record_notifications(sandbox, str(webhook.id), [now - timedelta(hours=10) + timedelta(seconds=10 * n) for n in range(150)])
    first = catch_up(settings, since=now - timedelta(days=1))
    assert first.loaded == len(held)
    recent = [now - timedelta(minutes=30) + timedelta(seconds=10 * n) for n in range(65)]
    missed_ids = _record_notifications(sandbox, str(webhook.id), recent)

    done = catch_up(settings, since=now - timedelta(hours=2))
    logged = {r[0] for r in fetch(settings, "SELECT notification_id FROM webhook_events")}
    lost = set(missed_ids) - logged
    assert not lost and done.loaded == len(missed_ids)
    assert done.records[0].stats.requests == (2 if order == "newest" else 3)  # newest first: the third page is never read
