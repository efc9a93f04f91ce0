"""Proof under faults and for secrets: a faulty service yields the same warehouse as a healthy one,
and a planted API key and webhook secret appear in no log, table, spool or result file."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from pathlib import Path

import httpx
import pytest
from pydantic import BaseModel

from shipsync.bulk.apply import apply_file
from shipsync.config import load_settings
from shipsync.pull.documents import pull_documents
from shipsync.pull.everything import pull_all
from shipsync.serving import BackgroundServer
from shipsync.webhooks.load import load_events
from shipsync.webhooks.receiver import Receiver
from shipsync.webhooks.registration import register_webhook
from shipsync.webhooks.secrets_store import store_path
from shipsync.webhooks.writer import SpoolWriter
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
    admin = {"Authorization": f"Token {planted_key}"}
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
        deadline = time.monotonic() + 20
        while httpx.get(f"{sandbox.server.url}/_admin/deliveries", headers=admin).json()["pending"] and time.monotonic() < deadline:
            time.sleep(0.1)
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
