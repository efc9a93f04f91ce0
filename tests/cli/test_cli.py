"""The README's commands as a user runs them, through the real CLI, against a sandbox."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from shipsync.cli import app
from shipsync.webhooks.receiver import Receiver
from shipsync.webhooks.secrets_store import load_secrets
from shipsync.webhooks.writer import SpoolWriter
from shipsync_sandbox.admin_client import wait_for_deliveries
from shipsync_sandbox.serving import BackgroundServer
from support.analyst import wait_for_observations
from support.lake import analyst
from support.sandboxes import K1, RunningSandbox, shipsync_env

runner = CliRunner()


@pytest.fixture
def env(sandbox: RunningSandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    more = {"spool": str(tmp_path / "spool"), "retry_base_delay": "0.01", "shared_budget": "off"}
    for name, value in shipsync_env(sandbox.api_url, tmp_path / "warehouse", **more).items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def ok(*args: str) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.output


# Slow: every command in turn; test_pull, test_bulk_templates and test_bulk_apply cover each in the fast tier.
@pytest.mark.slow
def test_pulls_status_templates_and_apply(env: Path) -> None:
    assert "pull_documents completed" in ok("pull", "all")
    assert "0 inserted, 0 updated" in ok("pull", "documents", "--all")
    assert "1 requests" in ok("pull", "metro-areas", "--id", "uslax", "--force")
    assert "pull_document_schemas completed" in ok("pull", "document-schemas", "--freshness-days", "0")
    assert "pull_tracking_requests completed" in ok("pull", "tracking-requests")
    ids = env / "ids.txt"
    ids.write_text("missing-id\n")
    assert "not found (1): missing-id" in ok("pull", "documents", "--ids-file", str(ids))
    assert "documents" in ok("status")
    ok("template", "custom-fields")
    assert (env / "custom-fields.csv").exists()
    sheet = env / "tags.csv"

    con = analyst(env / "warehouse")
    number = con.execute("SELECT number FROM containers LIMIT 1").fetchone()[0]  # type: ignore[index]
    con.close()
    sheet.write_text(f"Container Number,PO Number,Priority\n{number},PO-7,High\n")
    assert "2 planned" in ok("apply", "custom-fields", str(sheet), "--dry-run")
    applied = ok("apply", "custom-fields", str(sheet))
    assert "2 applied" in applied and "undo with: shipsync apply undo" in applied
    run_id = applied.split("undo with: shipsync apply undo ")[1].split()[0]
    assert "2 applied" in ok("apply", "undo", run_id)


def test_errors_are_one_line(env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SHIPSYNC_API_KEY")
    result = runner.invoke(app, ["pull", "all"])
    assert result.exit_code == 1 and "SHIPSYNC_API_KEY" in result.output and "Traceback" not in result.output
    monkeypatch.setenv("SHIPSYNC_API_KEY", "wrong-key-canary-7")
    result = runner.invoke(app, ["pull", "documents", "--all"])
    assert result.exit_code == 1 and "authentication failed" in result.output and "wrong-key-canary-7" not in result.output
    (env / "bad.csv").write_text("po_number\nPO-1\n")
    result = runner.invoke(app, ["apply", "custom-fields", str(env / "bad.csv")])
    assert result.exit_code == 1 and "bad.csv" in result.output and "no key column" in result.output


def test_a_dry_run_of_many_bad_rows_prints_each_kind_of_problem_once(env: Path) -> None:
    from shipsync.iso6346 import check_digit

    numbers = [f"ZZZU{n:06d}" for n in range(200)]
    rows = [f"{n}{check_digit(n)},PO-{i}" for i, n in enumerate(numbers)]
    sheet = env / "boxes.csv"
    sheet.write_text("container_number,po_number\n" + "\n".join(rows) + "\n")
    output = ok("apply", "custom-fields", str(sheet), "--dry-run")
    lines = output.strip().splitlines()
    # One kind of problem, its count and first three cells; every row is in the results file.
    assert "rows: 200 rejected; cells: 200 rejected" in lines[0]
    assert len(lines) <= 8, output
    assert "200 rejected container_number: container … is not in the warehouse" in output
    assert (env / "boxes.csv.custom-fields.dry-run.results.csv").read_text(encoding="utf-8-sig").count("rejected") == 200


@pytest.mark.slow
def test_webhooks_register_simulate_load_delete(env: Path, sandbox: RunningSandbox) -> None:
    writer = SpoolWriter(env / "spool")
    receiver = Receiver(writer, [])
    with BackgroundServer(receiver) as server:
        output = ok(
            "webhooks",
            "register",
            "--url",
            f"{server.url}/webhook",
            "--event",
            "container.transport.vessel_arrived",
            "--event",
            "container.transport.vessel_departed",
            "--header",
            "X-Team=ops",
        )
        webhook_id = output.split("registered webhook ")[1].split()[0]
        from shipsync.config import load_settings

        receiver.secrets.extend(load_secrets(load_settings()))
        assert "simulated" in ok("sandbox", "simulate", "--url", sandbox.server.url, "--api-key", K1, "--containers", "3")
        assert wait_for_deliveries(sandbox.server.url, K1)["pending"] == 0
    # What those boxes' journeys have sent by now (they are played up to the sandbox's now).
    account = sandbox.state.world.accounts[K1]
    sent = sum(
        1
        for box in account.of_type("container")[:3]
        for step in account.plans[account.shipment_of[box["id"]]].containers[box["id"]].steps
        if step.kind in ("container.transport.vessel_arrived", "container.transport.vessel_departed")
        and step.at <= account.as_of(box["id"])
    )
    assert sent > 0 and f"events load: {sent} loaded" in ok("events", "load")
    assert "deleted webhook" in ok("webhooks", "delete", webhook_id)
    bad = runner.invoke(app, ["webhooks", "register", "--url", "http://x/h", "--event", "container.transport.vessel_arived"])
    assert bad.exit_code == 1 and "did you mean container.transport.vessel_arrived" in bad.output


@pytest.mark.slow
def test_runs_commit_while_an_analyst_process_holds_a_transaction(env: Path) -> None:
    """An analyst's read-only transaction in another process (opened with the printed statements),
    querying the whole time: `pull all` and `events load` neither wait for it nor fail, each commits
    a snapshot of its own, and the held transaction keeps the snapshot it started from while a new
    connection sees the newest."""

    from shipsync_bench.journey_year import spooled_journeys
    from shipsync_sandbox.stream import document_pages

    warehouse, spool = env / "warehouse", env / "spool"
    spool.mkdir(mode=0o700)
    deliveries = list(spooled_journeys(document_pages(10), containers=2))
    half = len(deliveries) // 2
    assert half > 0, "the journeys of the documents' containers make deliveries"
    (spool / "segment-00000000000000000000-1.spool").write_bytes(b"".join(deliveries[:half]))
    assert f"events load: {half} loaded" in ok("events", "load")
    held_snapshot = newest_snapshot(warehouse)
    observed = env / "held.jsonl"
    script = str(Path(__file__).parents[1] / "support" / "analyst.py")
    holder = subprocess.Popen(
        [sys.executable, script, "hold", str(warehouse), str(observed), "300", "0.2"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        pulled = ok("pull", "all")
        assert "pull_documents completed" in pulled
        after_pull = newest_snapshot(warehouse)
        assert after_pull == held_snapshot + 1, pulled[-3000:]  # `pull all` is one snapshot
        (spool / "segment-00000000000000000001-1.spool").write_bytes(b"".join(deliveries[half:]))
        assert f"events load: {len(deliveries) - half} loaded" in ok("events", "load")
        assert newest_snapshot(warehouse) == after_pull + 1
        wait_for_observations(observed, holder, at_least=2, after=time.time())  # the holder queries again after the runs
    finally:
        holder.kill()
        holder.wait()
    observations = [json.loads(line) for line in observed.read_text().splitlines()]
    assert len(observations) >= 3 and not [o for o in observations if "error" in o]
    assert {(o["snapshot"], o["events"], o["documents"]) for o in observations} == {(held_snapshot, half, 0)}
    with analyst(warehouse) as fresh:
        assert fresh.execute("SELECT count(*), (SELECT count(*) > 0 FROM documents) FROM webhook_events").fetchone() == (
            len(deliveries),
            True,
        )
    assert "newest snapshot" in ok("status")


def newest_snapshot(warehouse: Path) -> int:
    with analyst(warehouse) as con:
        row = con.execute("SELECT id FROM ducklake_current_snapshot(current_database())").fetchone()
    assert row is not None
    return int(row[0])


# Slow (real rate windows of a sandbox process): test_bench_suite covers the table and the quick verdicts.
@pytest.mark.slow
def test_bench_command_writes_its_table_as_json(tmp_path: Path) -> None:
    output = tmp_path / "bench.json"
    printed = ok("bench", "--quick", "--only", "budget", "--output", str(output))
    rows = __import__("json").loads(output.read_text())
    assert "rate budget use" in printed and {r["name"] for r in rows} >= {"429s received under the limit"}
    assert all(set(r) == {"name", "figure", "unit", "peer", "peer_figure", "ratio", "goal", "pass"} for r in rows)


def test_a_stage_of_requests_shows_how_many_are_left_and_the_time_at_the_rate() -> None:
    from rich.progress import Progress

    from shipsync.api.ratelimit import RateLimit
    from shipsync.bulk.progress import RequestBudget
    from shipsync.cli.progress import RequestsLeftColumn, requests_left

    at_budget = RequestBudget(RateLimit(100, 60))
    assert requests_left(at_budget, 480) == "480 requests left, about 5 min at 100/60"  # 0.6 s each
    assert requests_left(at_budget, 1) == "1 request left, about 1 s at 100/60"
    assert requests_left(at_budget, 20_000) == "20,000 requests left, about 3 h 20 min at 100/60"
    assert requests_left(RequestBudget(None), 7) == "7 requests left, no rate limit"
    column = RequestsLeftColumn(at_budget)
    with Progress(column, disable=True) as bar:
        task_id = bar.add_task("writing", total=480)
        bar.advance(task_id, 380)
        assert column.render(bar.tasks[0]).plain == "100 requests left, about 60 s at 100/60"
