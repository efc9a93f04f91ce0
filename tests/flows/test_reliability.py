"""Proof under faults and for secrets: a faulty service yields the same warehouse as a healthy one,
and a planted API key and webhook secret appear in no log, table, spool or result file."""

from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import httpx
import pytest
from pydantic import BaseModel

from shipsync.bulk.apply import apply_file
from shipsync.config import load_settings
from shipsync.pull.documents import pull_documents
from shipsync.pull.everything import pull_all
from shipsync.warehouse.identifiers import literal
from shipsync.webhooks.load import load_events
from shipsync.webhooks.receiver import Receiver
from shipsync.webhooks.registration import register_webhook
from shipsync.webhooks.secrets_store import store_path
from shipsync.webhooks.writer import SpoolWriter
from shipsync_bench.postgres import DATABASE as PG_DATABASE
from shipsync_bench.postgres import USER as PG_USER
from shipsync_bench.postgres import TemporaryPostgres
from shipsync_sandbox.admin_client import wait_for_deliveries
from shipsync_sandbox.serving import BackgroundServer
from support.lake import analyst, location
from support.sandboxes import RunningSandbox, SandboxFactory, settings_for, shipsync_env

CONTENT = {
    "documents": "id, name, document_type, file_size_bytes, created_at, account_id",  # links name the host
    "document_shipments": "document_id, shipment_id",
    "document_containers": "document_id, container_id",
    "shipments": "id, bill_of_lading_number, tags, pod_eta_at, container_ids, leftovers",
    "containers": "id, number, current_status, pickup_lfd, holds_at_pod_terminal, leftovers",
    "metro_areas": "code, name, time_zone",
    "document_schemas": "id, schema_payload",
    "tracking_requests": "id, request_number, status, tags",
}


def snapshot(warehouse: Path) -> dict[str, list[tuple[object, ...]]]:
    con = analyst(warehouse)
    try:
        return {t: con.execute(f"SELECT {cols} FROM {t} ORDER BY ALL").fetchall() for t, cols in CONTENT.items()}
    finally:
        con.close()


@pytest.mark.slow
def test_pull_all_under_faults_equals_a_fault_free_run(make_sandbox: SandboxFactory, tmp_path: Path) -> None:
    healthy = make_sandbox(documents=80, seed=9)
    faulty = make_sandbox(documents=80, seed=9, fault_rate=0.05, latency_ms=2)
    ids = list(next(iter(healthy.state.world.accounts.values())).documents)
    # By id as well as by listing: ~115 requests, so 5% faults surely bite (0.95^115 < 0.3%).
    for sandbox, name in ((healthy, "healthy"), (faulty, "faulty")):
        settings = settings_for(sandbox, tmp_path / f"{name}.duckdb", max_retries=10)
        records = [pull_documents(settings, ids=ids), *pull_all(settings)]
    assert faulty.state.faults_injected > 0 and sum(r.stats.retries for r in records) > 0
    assert all(not r.errors for r in records)
    assert snapshot(tmp_path / "faulty.duckdb") == snapshot(tmp_path / "healthy.duckdb")


def everything_text(root: Path, warehouse: Path, skip: set[Path]) -> str:
    parts = [p.read_bytes().decode("utf-8", "replace") for p in root.rglob("*") if p.is_file() and p not in skip and p.suffix != ".duckdb"]
    con = analyst(warehouse)
    try:
        for (table,) in con.execute("SELECT table_name FROM information_schema.tables").fetchall():
            parts.append(str(con.execute(f'SELECT * FROM "{table}"').fetchall()))
    finally:
        con.close()
    return "\n".join(parts)


# Slow (pull, apply, webhooks end to end with DEBUG logs): test_secrets_store keeps the redaction in the fast tier.
@pytest.mark.slow
def test_secrets_canary(make_sandbox: SandboxFactory, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    planted_key = "canary-api-key-3f9c1e"
    sandbox: RunningSandbox = make_sandbox(api_keys=(planted_key,), documents=20)
    warehouse = tmp_path / "w"
    settings = settings_for(sandbox, warehouse, key=planted_key)
    caplog.set_level(logging.DEBUG)
    pull_all(settings)
    con = analyst(warehouse)
    number = con.execute("SELECT number FROM containers LIMIT 1").fetchone()[0]  # type: ignore[index]
    con.close()
    (tmp_path / "tags.csv").write_text(f"container_number,po_number,priority\n{number},PO-1,high\n{number}X,PO-2,low\n")
    apply_file(settings, "custom-fields", tmp_path / "tags.csv")
    receiver = Receiver(SpoolWriter(tmp_path / "spool"), [])
    with BackgroundServer(receiver) as server:
        webhook = register_webhook(settings, f"{server.url}/webhook", [], all_events=True)
        assert webhook.secret
        planted_secret = webhook.secret
        receiver.secrets.append(planted_secret)
        httpx.post(
            f"{sandbox.server.url}/_admin/simulate", params={"containers": 2}, headers={"Authorization": f"Token {planted_key}"}
        ).raise_for_status()
        assert wait_for_deliveries(sandbox.server.url, planted_key)["pending"] == 0
    assert load_events(location(warehouse), tmp_path / "spool").loaded > 0
    secrets_file = store_path(settings)
    assert planted_secret in secrets_file.read_text()  # the one place it belongs
    haystack = everything_text(tmp_path, warehouse, {secrets_file}) + caplog.text + repr(settings) + repr(webhook)
    assert planted_key not in haystack and planted_secret not in haystack
    assert "shipsync.api" in caplog.text  # DEBUG logging was on and the client did log


async def _prefect_records() -> tuple[str, str, str]:
    """The newest flow runs on the Prefect server, and their artifacts and logs, each as the JSON of
    Prefect's own records (every field the server keeps)."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId, LogFilter, LogFilterFlowRunId
    from prefect.client.schemas.sorting import FlowRunSort

    async with get_client() as client:
        runs = await client.read_flow_runs(sort=FlowRunSort.EXPECTED_START_TIME_DESC, limit=50)
        ids = [run.id for run in runs]
        artifacts = await client.read_artifacts(artifact_filter=ArtifactFilter(flow_run_id=ArtifactFilterFlowRunId(any_=ids)), limit=200)
        logs = await client.read_logs(log_filter=LogFilter(flow_run_id=LogFilterFlowRunId(any_=ids)), limit=200)
    return _as_json(runs), _as_json(artifacts), _as_json(logs)


def _as_json(records: Sequence[BaseModel]) -> str:
    return "\n".join(record.model_dump_json() for record in records)


@pytest.mark.slow
def test_secrets_canary_in_prefect(
    prefect_harness: None, make_sandbox: SandboxFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The flows' artifacts, logs and parameters on the Prefect server never hold the key or a secret."""
    import asyncio

    from flows.bulk import apply_spreadsheet
    from flows.pull import pull_all as pull_all_flow
    from flows.webhooks import register

    planted_key = "canary-prefect-key-8d21a7"
    sandbox: RunningSandbox = make_sandbox(api_keys=(planted_key,), documents=10)
    warehouse = tmp_path / "w"
    caplog.set_level(logging.DEBUG, logger="shipsync")
    for name, value in shipsync_env(sandbox.api_url, warehouse, planted_key).items():
        monkeypatch.setenv(name, value)
    asyncio.run(pull_all_flow())
    con = analyst(warehouse)
    number = con.execute("SELECT number FROM containers LIMIT 1").fetchone()[0]  # type: ignore[index]
    con.close()
    (tmp_path / "tags.csv").write_text(f"container_number,po_number\n{number},PO-9\n")
    asyncio.run(apply_spreadsheet("custom-fields", str(tmp_path / "tags.csv")))
    webhook_id = asyncio.run(register("http://127.0.0.1:9/webhook", all_events=True))
    secrets_file = store_path(load_settings())
    planted_secret = json.loads(secrets_file.read_text())[webhook_id]
    assert planted_secret

    runs, artifacts, logs = asyncio.run(_prefect_records())
    assert "pull-all" in artifacts and "apply-custom-fields" in artifacts and '"message"' in logs
    haystack = runs + artifacts + logs + everything_text(tmp_path, warehouse, {secrets_file})
    assert planted_key not in haystack and planted_secret not in haystack


# Every form a credential may be given in, each with a canary of its own (issue 36, item 2).
URI_PASSWORD = "the catalog URI's password"
CANARIES = {
    URI_PASSWORD: "canary-uri-pw-5c1e",
    "a catalog URI's wrong password": "canary-wrong-pw-8b2d",
    "a libpq keyword password": "canary-keyword-pw-3f7a",
    "PGPASSWORD": "canary-pgpassword-9e4b",
    "AWS_SECRET_ACCESS_KEY": "canary-aws-secret-2d6c",
    "AWS_SESSION_TOKEN": "canary-aws-session-7a1f",
    "AWS_ACCESS_KEY_ID": "AKIACANARY7Q3Z9X1W2E",
    "SHIPSYNC_API_KEY": "canary-api-key-4e8d",
}


def _catalog(pg: TemporaryPostgres, password: str, port: int | None = None) -> str:
    return f"ducklake:postgres:postgresql://{PG_USER}:{password}@127.0.0.1:{port or pg.port}/{PG_DATABASE}"


def _lake_text(env: dict[str, str]) -> str:
    """Every row of every table of the lake (the ledger included), read as an analyst would."""
    from shipsync.config import load_settings
    from shipsync.warehouse.analyst import read_only

    settings = load_settings(warehouse=env["SHIPSYNC_WAREHOUSE"], warehouse_data=env["SHIPSYNC_WAREHOUSE_DATA"])
    with read_only(settings.lake) as con:
        tables = [row[0] for row in con.execute("SELECT table_name FROM duckdb_tables() WHERE database_name = 'lake'").fetchall()]
        return "\n".join(str(con.execute(f'SELECT * FROM "{table}"').fetchall()) for table in tables)


@pytest.mark.slow
def test_credential_canaries_in_every_form(tmp_path: Path) -> None:
    """A lake whose catalog is a real PostgreSQL reached through a `postgresql://USER:PASSWORD@`
    URI, with a canary in every other form a credential takes (PGPASSWORD, AWS keys, the API key, a
    libpq `password=`, a wrong password): status, print-attach, the report, maintenance, a
    spreadsheet's results, connection errors, `up`'s banner, its flow runs (Prefect's database,
    logs and artifacts, the worker's log) and the lake's own tables hold none of them."""
    from shipsync.orchestration.api_auth import PrefectApi
    from shipsync_bench.processes import SandboxProcess, UpProcess
    from shipsync_sandbox.serving import free_port
    from support.prefect_up import ROOT, api, run_deployments, up_env

    key = CANARIES["SHIPSYNC_API_KEY"]
    outputs: dict[str, str] = {}
    with TemporaryPostgres() as pg, SandboxProcess("--rate-limit", "0", "--documents", "20", "--api-key", key) as sandbox:
        pg.execute(f"ALTER ROLE {PG_USER} PASSWORD {literal(CANARIES[URI_PASSWORD])}")
        env = up_env(
            tmp_path,
            sandbox.api_url,
            SHIPSYNC_API_KEY=key,
            SHIPSYNC_WAREHOUSE=_catalog(pg, CANARIES[URI_PASSWORD]),
            SHIPSYNC_WAREHOUSE_DATA=str(tmp_path / "lake-data"),
            SHIPSYNC_SPOOL=str(tmp_path / "spool"),
            SHIPSYNC_SECRETS_FILE=str(tmp_path / "config" / "secrets.json"),
            PGPASSWORD=CANARIES["PGPASSWORD"],
            AWS_SECRET_ACCESS_KEY=CANARIES["AWS_SECRET_ACCESS_KEY"],
            AWS_SESSION_TOKEN=CANARIES["AWS_SESSION_TOKEN"],
            AWS_ACCESS_KEY_ID=CANARIES["AWS_ACCESS_KEY_ID"],
        )
        env.pop("PREFECT_API_URL", None)

        def shipsync(name: str, *args: str, overrides: dict[str, str] | None = None, ok: bool = True) -> str:
            done = subprocess.run(
                [sys.executable, "-m", "shipsync", *args],
                env={**env, **(overrides or {})},
                cwd=ROOT,
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
            )
            assert (done.returncode == 0) is ok, f"{name}: {done.stdout[-2000:]}{done.stderr[-2000:]}"
            outputs[name] = done.stdout + done.stderr
            return done.stdout

        shipsync("pull all", "pull", "all")
        shipsync("status", "status")
        shipsync("print-attach", "sql", "--print-attach")
        shipsync("report", "report", "--output", str(tmp_path / "out" / "report.html"))
        shipsync("maintain", "warehouse", "maintain")
        number = re.search(r"\b[A-Z]{4}\d{7}\b", shipsync("a container", "sql", "-c", "SELECT number FROM containers LIMIT 1"))
        assert number is not None, outputs["a container"]
        (tmp_path / "tags.csv").write_text(f"container_number,po_number\n{number.group(0)},PO-CANARY\n")
        shipsync("apply", "apply", "custom-fields", str(tmp_path / "tags.csv"))
        wrong = {
            "wrong password": _catalog(pg, CANARIES["a catalog URI's wrong password"]),
            "unreachable catalog": _catalog(pg, CANARIES[URI_PASSWORD], port=free_port()),
            "keyword form": f"ducklake:postgres:dbname={PG_DATABASE} host=127.0.0.1 port={pg.port} user={PG_USER} "
            f"password={CANARIES['a libpq keyword password']}",
        }
        for name, catalog in wrong.items():
            for command in (["status"], ["pull", "metro-areas"]):
                shipsync(f"{name}: {' '.join(command)}", *command, overrides={"SHIPSYNC_WAREHOUSE": catalog}, ok=False)
        assert "password authentication failed" in outputs["wrong password: status"], outputs["wrong password: status"]

        up = UpProcess(env=env, cwd=ROOT).start()
        try:
            prefect: PrefectApi = up.prefect_api
            shipsync("register", "webhooks", "register", "--url", up.receiver_url, "--all-events")
            runs = [("pull_all/pull-all", {}), ("maintain_warehouse/maintain-warehouse", {}), ("report/report", {})]
            states = run_deployments(env, prefect, runs)
            assert [state for _, state in states] == ["COMPLETED"] * 3, states
            run_ids = [run_id for run_id, _ in states]
            prefect_records = [
                json.dumps(api(prefect, "/flow_runs/filter", {"limit": 200})),
                json.dumps(api(prefect, "/logs/filter", {"logs": {"flow_run_id": {"any_": run_ids}}, "limit": 200})),
                json.dumps(api(prefect, "/artifacts/filter", {"limit": 200})),
                json.dumps(api(prefect, "/deployments/filter", {"limit": 200})),
            ]
        finally:
            up.stop()
        outputs["up"] = up.output
        outputs["Prefect's API"] = "\n".join(prefect_records)
        outputs["the lake"] = _lake_text(env)

    secrets_file = tmp_path / "config" / "secrets.json"
    files = {str(p.relative_to(tmp_path)): p.read_bytes().decode("utf-8", "replace") for p in tmp_path.rglob("*") if p.is_file()}
    files.pop(str(secrets_file.relative_to(tmp_path)))
    outputs.update(files)
    found = {form: [where for where, text in outputs.items() if canary in text] for form, canary in CANARIES.items()}
    assert not any(found.values()), {form: where for form, where in found.items() if where}
    # What was looked at: the outputs say where the lake is, masked; the flows ran and logged.
    assert all("postgresql://shipsync:***@127.0.0.1" in outputs[name] for name in ("status", "up", "print-attach", "maintain"))
    assert "maintain" in outputs["Prefect's API"] and any(name.endswith("worker.log") for name in outputs)
    assert any(name.endswith("report.html") for name in outputs) and any(name.endswith("prefect.db") for name in outputs)
    assert any(name.endswith(".results.csv") for name in outputs)
