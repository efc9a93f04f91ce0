"""Pulls against the sandbox: counts match what it serves, re-runs change nothing, errors are kept."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from shipsync.errors import AuthenticationError
from shipsync.pull.documents import pull_documents, read_ids_file
from shipsync.pull.everything import pull_all
from shipsync.pull.reference import pull_document_schemas, pull_metro_areas
from shipsync.pull.tracking_requests import pull_tracking_requests
from shipsync_sandbox.world import Account
from support.lake import sql_now
from support.sandboxes import K1, RunningSandbox, SandboxFactory, settings_for
from support.warehouse_rows import count


def expected_counts(account: Account) -> dict[str, int]:
    docs = account.documents.values()
    shipments = {s["id"] for d in docs for s in d["relationships"]["shipments"]["data"]}
    locodes = {
        account.related[("shipment", s)]["attributes"][k]
        for s in shipments
        for k in ("port_of_lading_locode", "port_of_discharge_locode", "destination_locode")
    }
    schemas = {
        account.related[("document_representation", d["relationships"]["last_document_representation"]["data"]["id"])]["attributes"][
            "schema_version"
        ]
        for d in docs
    }
    return {
        "documents": len(account.documents),
        # `pull shipments` and `pull containers` read every one the account has, not only the documents'.
        "shipments": len(account.of_type("shipment")),
        "containers": len(account.of_type("container")),
        "document_shipments": sum(len(d["relationships"]["shipments"]["data"]) for d in docs),
        "document_containers": sum(len(d["relationships"]["cargos"]["data"]) for d in docs),
        "users": len({d["relationships"]["user"]["data"]["id"] for d in docs}),
        "accounts": 1,
        "email_submissions": len(account.documents),
        "document_representations": len(account.documents),
        "tracking_requests": len(account.tracking_requests),
        "metro_areas": len(locodes),
        "document_schemas": len(schemas),
    }


@pytest.mark.slow
def test_pull_all_matches_the_sandbox_and_reruns_change_nothing(sandbox: RunningSandbox, warehouse: Path) -> None:
    settings = settings_for(sandbox, warehouse)
    first = pull_all(settings)
    assert all(r.stats.throttled == 0 and not r.errors and not r.not_found for r in first)
    for table, expected in expected_counts(sandbox.state.world.accounts[K1]).items():
        found = count(warehouse, f"SELECT count(*) FROM {table}")
        # Metro areas: the documents' ports, and also those of every shipment and transport event.
        assert found >= expected if table == "metro_areas" else found == expected, table
    second = pull_all(settings)
    assert sum(r.totals().inserted + r.totals().updated for r in second) == 0
    assert count(warehouse, "SELECT count(*) FROM sync_runs WHERE status = 'completed'") == 15  # the second skips the fresh carriers
    assert count(warehouse, "SELECT count(*) FROM document_overview WHERE account_name = 'Acme Imports'") == 30
    assert (
        count(
            warehouse,
            "SELECT count(*) FROM documents WHERE self_link IS NULL OR download_link IS NULL OR file_size_bytes IS NULL",
        )
        == 0
    )


@pytest.mark.slow
def test_changed_document_is_updated(sandbox: RunningSandbox, warehouse: Path) -> None:
    settings = settings_for(sandbox, warehouse)
    pull_documents(settings, all_documents=True)
    document = next(iter(sandbox.state.world.accounts[K1].documents.values()))
    document["attributes"]["name"] = "Renamed invoice"
    record = pull_documents(settings, all_documents=True)
    assert record.counts["documents"].updated == 1 and record.counts["documents"].inserted == 0
    assert count(warehouse, "SELECT count(*) FROM documents WHERE name = 'Renamed invoice'") == 1


@pytest.mark.slow
def test_404_is_recorded_and_does_not_fail_the_batch(sandbox: RunningSandbox, warehouse: Path, tmp_path: Path) -> None:
    ids = list(sandbox.state.world.accounts[K1].documents)[:3]
    ids_file = tmp_path / "ids.txt"
    ids_file.write_text("# documents to pull\n" + "\n".join([*ids, "missing-1", ""]) + "\n")
    record = pull_documents(settings_for(sandbox, warehouse), ids=[*read_ids_file(ids_file), "missing-2"])
    assert sorted(record.not_found) == ["missing-1", "missing-2"]
    assert count(warehouse, "SELECT count(*) FROM documents") == 3
    assert count(warehouse, "SELECT count(*) FROM sync_runs WHERE status = 'completed_with_errors' AND len(not_found) = 2") == 1


def test_401_stops_the_run_at_once(sandbox: RunningSandbox, warehouse: Path) -> None:
    with pytest.raises(AuthenticationError):
        pull_documents(settings_for(sandbox, warehouse, key="not-a-key"), all_documents=True)
    assert count(warehouse, "SELECT count(*) FROM sync_runs WHERE status = 'failed'") == 1
    assert count(warehouse, "SELECT count(*) FROM documents") == 0


@pytest.mark.slow
def test_give_ups_are_listed_never_dropped(make_sandbox: SandboxFactory, warehouse: Path) -> None:
    sandbox = make_sandbox(fault_rate=0.5, seed=5)
    ids = list(sandbox.state.world.accounts[K1].documents)
    record = pull_documents(settings_for(sandbox, warehouse, max_retries=0), ids=ids)
    loaded = count(warehouse, "SELECT count(*) FROM documents")
    assert record.errors and loaded + len(record.errors) == len(ids)
    assert all(":" in e for e in record.errors)


def _age(warehouse: Path, sql: str) -> None:
    sql_now(warehouse, sql)


@pytest.mark.slow
def test_freshness_window_and_force(sandbox: RunningSandbox, warehouse: Path) -> None:
    settings = settings_for(sandbox, warehouse)
    pull_documents(settings, all_documents=True)
    first = pull_metro_areas(settings)
    assert first.stats.requests == first.counts["metro_areas"].inserted > 0
    assert pull_metro_areas(settings).stats.requests == 0
    assert pull_metro_areas(settings, force=True).stats.requests == first.stats.requests
    # Read a day ago and unchanged for a month: still fresh (a read counts, not only a change).
    _age(warehouse, "UPDATE metro_areas SET _synced_at = now() - INTERVAL 30 DAY, observed_at = now() - INTERVAL 1 DAY")
    assert pull_metro_areas(settings).stats.requests == 0
    _age(warehouse, "UPDATE metro_areas SET observed_at = now() - INTERVAL 8 DAY")
    assert pull_metro_areas(settings).stats.requests == first.stats.requests
    given = pull_metro_areas(settings, ids=["nlrtm", "ZZZZZ"], force=True)
    assert given.not_found == ["ZZZZZ"]
    schemas = pull_document_schemas(settings, ids=["commercial_invoice@2025-11-04"])
    assert schemas.counts["document_schemas"].inserted == 1


def test_tracking_requests_are_incremental(sandbox: RunningSandbox, warehouse: Path) -> None:
    settings = settings_for(sandbox, warehouse)
    first = pull_tracking_requests(settings)
    assert first.counts["tracking_requests"].inserted == len(sandbox.state.world.accounts[K1].tracking_requests)
    target = next(iter(sandbox.state.world.accounts[K1].tracking_requests))

    async def edit() -> None:
        async with sandbox.client() as client:
            await client.tracking_requests.update(target, ref_number="incremental")

    asyncio.run(edit())
    second = pull_tracking_requests(settings)
    assert second.counts["tracking_requests"].updated == 1
    assert second.counts["tracking_requests"].inserted + second.counts["tracking_requests"].unchanged == 0
    assert count(warehouse, "SELECT count(*) FROM tracking_requests WHERE list_contains(ref_numbers, 'incremental')") == 1
