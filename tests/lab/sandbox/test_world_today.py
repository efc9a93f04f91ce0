"""One "today" (issue 29, item 1): a fresh sandbox's world starts at the current hour, so its last
free days and ETAs are about the present, whatever the machine's date; and a world is the same
relative to its start, so a fixed start (`SandboxOptions.start`, `--start`) gives the same data on
any day."""

from __future__ import annotations

import asyncio
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from shipsync_sandbox import SandboxApp, SandboxOptions, create_app
from shipsync_sandbox.seed import AccountSize, build_world
from shipsync_sandbox.timeline import REFERENCE_START, iso, parse
from shipsync_sandbox.views import container_view, shipment_view, tracking_request_view
from shipsync_sandbox.world import World
from support.sandboxes import K1

TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")


async def _every(app: SandboxApp, path: str) -> list[dict[str, Any]]:
    transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
    found: list[dict[str, Any]] = []
    async with httpx.AsyncClient(transport=transport, headers={"Authorization": f"Token {K1}"}) as client:
        url: str | None = f"http://sandbox.test/v2/{path}?page[size]=100"
        while url:
            body = (await client.get(url)).raise_for_status().json()
            found += body["data"]
            url = body["links"].get("next")
    return found


def served(app: SandboxApp, path: str) -> list[dict[str, Any]]:
    return asyncio.run(_every(app, path))


def test_a_fresh_sandbox_is_about_today() -> None:
    app = create_app(SandboxOptions(api_keys=(K1,), rate_limit=None))
    now = datetime.now(UTC)
    assert timedelta(0) <= now - app.state.world.start < timedelta(hours=2)
    waiting = [
        parse(c["attributes"]["pickup_lfd"]) - now
        for c in served(app, "containers")
        if c["attributes"]["available_for_pickup"] and c["attributes"]["pickup_lfd"]
    ]
    assert any(timedelta(0) <= left <= timedelta(days=3) for left in waiting), "some boxes' last free day within 3 days"
    assert waiting and all(abs(left) < timedelta(days=10) for left in waiting), "no box waits on a last free day months away"
    arriving = [parse(s["attributes"]["pod_eta_at"]) - now for s in served(app, "shipments") if s["attributes"]["pod_ata_at"] is None]
    assert any(timedelta(days=1) <= eta <= timedelta(days=8) for eta in arriving), "some shipments arrive next week"
    assert all(eta > -timedelta(days=2) for eta in arriving), "nothing long overdue"


def _shifted(earlier: Any, later: Any, by: timedelta, where: str) -> list[str]:
    """Where `later` is not `earlier` with every timestamp moved on by `by`."""
    if isinstance(earlier, dict) and isinstance(later, dict):
        if earlier.keys() != later.keys():
            return [f"{where}: members {sorted(earlier.keys() ^ later.keys())}"]
        return [problem for key in earlier for problem in _shifted(earlier[key], later[key], by, f"{where}.{key}")]
    if isinstance(earlier, list) and isinstance(later, list) and len(earlier) == len(later):
        return [problem for n, (a, b) in enumerate(zip(earlier, later, strict=True)) for problem in _shifted(a, b, by, f"{where}[{n}]")]
    if isinstance(earlier, str) and TIMESTAMP.match(earlier):
        return [] if isinstance(later, str) and later == iso(parse(earlier) + by) else [f"{where}: {earlier} -> {later}"]
    return [] if earlier == later else [f"{where}: {earlier!r} -> {later!r}"]


def _views(world: World) -> list[dict[str, Any]]:
    account = world.accounts["k"]
    return [
        *(container_view(account, c) for c in account.of_type("container")),
        *(shipment_view(account, s) for s in account.of_type("shipment")),
        *(tracking_request_view(account, t) for t in account.tracking_requests.values()),
        *account.documents.values(),
    ]


def test_a_world_is_the_same_relative_to_its_start() -> None:
    later_by = timedelta(days=131)  # whole days: a last free day is a calendar day
    size = AccountSize(documents=60)
    earlier = _views(build_world(["k"], start=REFERENCE_START, size=size))
    later = _views(build_world(["k"], start=REFERENCE_START + later_by, size=size))
    assert len(earlier) == len(later) > 100
    problems = [p for a, b in zip(earlier, later, strict=True) for p in _shifted(a, b, later_by, f"{a['type']} {a['id']}")]
    assert problems == []
