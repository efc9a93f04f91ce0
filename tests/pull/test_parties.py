"""`parties`, the worked example of docs/extending.md: one declaration (a full listing into its
declared table) gives `shipsync pull parties`, which lands the sandbox's parties in the
warehouse and records its run in the ledger."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from shipsync.cli import app
from support.lake import analyst
from support.sandboxes import K1, RunningSandbox, shipsync_env


def test_pull_parties_lands_every_party_of_the_account(sandbox: RunningSandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in shipsync_env(sandbox.api_url, tmp_path / "warehouse", shared_budget="off").items():
        monkeypatch.setenv(name, value)
    served = sandbox.state.world.accounts[K1].parties
    assert len(served) > 1

    result = CliRunner().invoke(app, ["pull", "parties"])
    assert result.exit_code == 0, result.output
    assert f"pull_parties completed: {len(served)} inserted" in result.output
    again = CliRunner().invoke(app, ["pull", "parties"])
    assert f"0 inserted, 0 updated, {len(served)} unchanged" in again.output

    with analyst(tmp_path / "warehouse") as con:
        rows = con.execute("SELECT id, company_name FROM parties ORDER BY id").fetchall()
        runs = con.execute("SELECT flow, status FROM sync_runs ORDER BY started_at").fetchall()
    assert rows == sorted((p["id"], p["attributes"]["company_name"]) for p in served.values())
    assert runs == [("pull_parties", "completed"), ("pull_parties", "completed")]
