"""One today (issue 29, item 1), seen through the views: a fresh sandbox's world starts at the
current hour, so a warehouse pulled from it reads about the present: the boxes waiting for pickup
have their last free day days from today, not months ago; with `as_of` set, the days count to it."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from shipsync.pull.tracking import pull_containers, pull_shipments
from support.lake import analyst
from support.sandboxes import K1, SandboxFactory, settings_for


@pytest.mark.slow  # a full-size account pulled (the demo's), ~30 s
def test_a_fresh_sandboxs_boxes_are_due_about_today(make_sandbox: SandboxFactory, tmp_path: Path) -> None:
    sandbox = make_sandbox(api_keys=(K1,), documents=200)  # no start given: the current hour
    settings = settings_for(sandbox, tmp_path / "warehouse")
    pull_shipments(settings)
    pull_containers(settings)
    with analyst(tmp_path / "warehouse") as con:
        days = [
            d for (d,) in con.execute("SELECT days_until_lfd FROM containers_awaiting_pickup WHERE days_until_lfd IS NOT NULL").fetchall()
        ]
        at_risk = con.execute("SELECT count(*) FROM pickup_risk").fetchone()
        start = sandbox.state.world.start.date()
        con.execute("SET VARIABLE as_of = ?", [start + timedelta(days=100)])
        later = [
            d for (d,) in con.execute("SELECT days_until_lfd FROM containers_awaiting_pickup WHERE days_until_lfd IS NOT NULL").fetchall()
        ]
    assert days and all(-10 < d < 10 for d in days), f"days until the last free day, from today: {sorted(days)}"
    assert any(0 <= d <= 3 for d in days) and at_risk is not None and at_risk[0] > 0
    assert sorted(later) == sorted(d - 100 for d in days)  # a day that is not today, when asked for
