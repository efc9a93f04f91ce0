"""A tracking request's tags as the service sends them today (issue 12, item 3): answers and
deliveries carry them as `shipment_tags`; pulls and the event loader both end with them in
`tracking_requests.tags`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

from shipsync.pull.tracking_requests import pull_tracking_requests
from shipsync.webhooks.framing import encode_record
from shipsync.webhooks.load import load_events
from shipsync_sandbox.deliver import envelope
from shipsync_sandbox.views import tracking_request_view
from support.lake import fetch, location
from support.sandboxes import K1, RunningSandbox, settings_for

# Newer than anything the sandbox holds, and within the window events load trusts (up to two years ahead).
NEWER = (datetime.now(UTC) + timedelta(days=365)).strftime("%Y-%m-%dT%H:%M:%SZ")


def tagged_request(sandbox: RunningSandbox) -> tuple[dict[str, Any], dict[str, Any]]:
    account = sandbox.state.world.accounts[K1]
    request = next(tr for tr in account.tracking_requests.values() if tracking_request_view(account, tr)["attributes"]["tags"])
    return request, tracking_request_view(account, request)


def test_a_pull_reads_shipment_tags(sandbox: RunningSandbox, warehouse: Path) -> None:
    request, view = tagged_request(sandbox)
    assert view["attributes"]["tags"] == ["seeded"]
    pull_tracking_requests(settings_for(sandbox, warehouse))
    assert fetch(warehouse, "SELECT tags FROM tracking_requests WHERE id = ?", [request["id"]]) == [(["seeded"],)]


def deliver(warehouse: Path, bodies: list[dict[str, Any]]) -> None:
    spool = warehouse.parent / "spool"
    spool.mkdir(parents=True, exist_ok=True, mode=0o700)
    (spool / "segment-1.spool").write_bytes(b"".join(encode_record(orjson.dumps(b), 0) for b in bodies))
    load_events(location(warehouse), spool)


def test_the_event_loader_reads_shipment_tags(sandbox: RunningSandbox, warehouse: Path) -> None:
    request, view = tagged_request(sandbox)
    view["attributes"]["shipment_tags"] = view["attributes"].pop("tags")  # as deliveries may carry them
    view["attributes"]["updated_at"] = NEWER  # the event refreshes the row
    deliver(warehouse, [envelope("w", "tracking_request.succeeded", view, [view], NEWER)])
    assert fetch(warehouse, "SELECT tags FROM tracking_requests WHERE id = ?", [request["id"]]) == [(["seeded"],)]
