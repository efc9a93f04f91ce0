"""`shipsync pull raw-events`: the carrier's own milestones (past and estimated) of the containers
whose journey is still open, one request per container, from the sandbox into the lake's
`raw_events`; finished containers are not read, a named container is, an unknown one is said."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from shipsync.cli import app
from shipsync.pull.tracking import pull_containers
from shipsync_sandbox.journey_state import raw_events
from support.lake import analyst
from support.sandboxes import K1, RunningSandbox, SandboxFactory, settings_for, shipsync_env


@pytest.fixture
def containers_pulled(make_sandbox: SandboxFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> RunningSandbox:
    """A sandbox that records its exchanges, and a warehouse that pulled its containers (the log cleared)."""
    sandbox = make_sandbox(record_exchanges=True)
    pull_containers(settings_for(sandbox, tmp_path / "warehouse"))
    for name, value in shipsync_env(sandbox.api_url, tmp_path / "warehouse", shared_budget="off").items():
        monkeypatch.setenv(name, value)
    sandbox.app.exchanges.clear()
    return sandbox


def served_raw_events(sandbox: RunningSandbox) -> dict[str, list[dict[str, Any]]]:
    """Every container's raw events as the sandbox serves them, by container id."""
    account = sandbox.state.world.accounts[K1]
    served = {}
    for plan in account.plans.values():
        for container_id, box in plan.containers.items():
            served[container_id] = raw_events(plan, box, account.as_of(container_id))
    return served


def journey_open(sandbox: RunningSandbox, container_id: str) -> bool:
    """Whether the sandbox's container still has a step of its journey ahead of it."""
    account = sandbox.state.world.accounts[K1]
    box = account.plans[account.shipment_of[container_id]].containers[container_id]
    return bool(box.steps[-1].at > account.as_of(container_id))


def raw_events_read(sandbox: RunningSandbox) -> list[str]:
    """The container ids whose raw events the sandbox was asked for since its log was cleared."""
    paths = [e.path for e in sandbox.app.exchanges.exchanges]
    return [p.split("/")[-2] for p in paths if p.endswith("/raw_events")]


def _instant(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text.replace("Z", "+00:00")) if text else None


def test_pull_raw_events_lands_every_raw_event_of_the_open_containers_and_reads_no_finished_one(
    containers_pulled: RunningSandbox, tmp_path: Path
) -> None:
    sandbox = containers_pulled
    served = served_raw_events(sandbox)
    open_ids = sorted(c for c in served if journey_open(sandbox, c))
    assert open_ids and len(open_ids) < len(served)  # both kinds, or the test shows nothing

    result = CliRunner().invoke(app, ["pull", "raw-events"])
    assert result.exit_code == 0, result.output
    expected = [e for c in open_ids for e in served[c]]
    assert f"pull_raw_events completed: {len(expected)} inserted" in result.output
    assert sorted(raw_events_read(sandbox)) == open_ids  # one request each, none for a finished container

    with analyst(tmp_path / "warehouse") as con:
        rows = con.execute(
            "SELECT id, container_id, event, original_event, timestamp, estimated, estimated_at, actual_at, "
            "location_locode, location_name, vessel_name, voyage_number, index FROM raw_events ORDER BY id"
        ).fetchall()
        finished = con.execute(
            f"SELECT count(*) FROM containers WHERE id NOT IN ({', '.join('?' for _ in open_ids)}) AND current_status = 'empty_returned'",
            open_ids,
        ).fetchone()
    assert finished is not None and finished[0] == len(served) - len(open_ids)
    want = sorted(
        (
            e["id"],
            c,
            a["event"],
            a["original_event"],
            _instant(a["timestamp"]),
            a["estimated"],
            _instant(a["estimated_at"]),
            _instant(a["actual_at"]),
            a["location_locode"],
            a["location_name"],
            a["vessel_name"],
            a["voyage_number"],
            a["index"],
        )
        for c in open_ids
        for e in served[c]
        for a in [e["attributes"]]
    )
    assert rows == want
    assert any(r[5] for r in rows) and not all(r[5] for r in rows)  # estimated and past events alike

    sandbox.app.exchanges.clear()
    again = CliRunner().invoke(app, ["pull", "raw-events"])
    assert f"0 inserted, 0 updated, {len(expected)} unchanged; {len(open_ids)} requests" in again.output


def test_named_containers_are_read_finished_or_not_and_an_unknown_one_is_said(containers_pulled: RunningSandbox, tmp_path: Path) -> None:
    sandbox = containers_pulled
    served = served_raw_events(sandbox)
    finished = next(c for c in sorted(served) if not journey_open(sandbox, c))

    result = CliRunner().invoke(app, ["pull", "raw-events", "--container-id", finished, "--container-id", "no-such-container"])
    assert result.exit_code == 0, result.output
    assert f"pull_raw_events completed with errors: {len(served[finished])} inserted" in result.output
    assert "  not found (1): no-such-container" in result.output
    assert sorted(raw_events_read(sandbox)) == sorted([finished, "no-such-container"])

    with analyst(tmp_path / "warehouse") as con:
        landed = con.execute("SELECT DISTINCT container_id FROM raw_events").fetchall()
        run = con.execute("SELECT status, not_found FROM sync_runs WHERE flow = 'pull_raw_events'").fetchall()
    assert landed == [(finished,)]
    assert run == [("completed_with_errors", ["no-such-container"])]
