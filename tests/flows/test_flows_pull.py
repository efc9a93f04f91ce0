"""The pull flows run as real Prefect flows: a ledger row per run and a markdown artifact of counts."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from support.lake import analyst

# The flows and Prefect are imported by the tests that use them: importing Prefect costs 2-4 s,
# which collecting the fast tier (`-m "not slow"`, where these tests are left out) need not pay.


async def _artifacts(key: str) -> list[str]:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    async with get_client() as client:
        found = await client.read_artifacts(artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=[key])), limit=50)
    return [str(artifact.data) for artifact in found]


@pytest.mark.slow
def test_pull_all_flow(prefect_harness: None, flow_env: Path) -> None:
    from flows.pull import pull_all, pull_containers, pull_places, pull_shipments, pull_shipping_lines

    asyncio.run(pull_all())
    asyncio.run(pull_all())
    con = analyst(flow_env)
    runs = con.execute("SELECT flow, status, prefect_flow_run_id FROM sync_runs ORDER BY started_at").fetchall()
    documents = con.execute("SELECT count(*) FROM documents").fetchone()
    con.close()
    assert len(runs) == 15 and {status for _, status, _ in runs} == {"completed"}
    assert len({flow_run for _, _, flow_run in runs}) == 2  # two flow runs: eight pulls, then seven (carriers are fresh)
    assert documents == (30,)
    markdown = asyncio.run(_artifacts("pull-all"))
    assert len(markdown) == 2 and "| documents |" in markdown[0] and "pull_metro_areas" in markdown[0]
    for flow in (pull_shipments, pull_containers, pull_shipping_lines, pull_places):
        asyncio.run(flow())
    con = analyst(flow_env)
    last = con.execute("SELECT flow, status FROM sync_runs ORDER BY started_at DESC LIMIT 4").fetchall()
    con.close()
    assert sorted(last) == [(f, "completed") for f in ("pull_containers", "pull_places", "pull_shipments", "pull_shipping_lines")]


@pytest.mark.slow
def test_flows_with_ids_and_not_found(prefect_harness: None, flow_env: Path, tmp_path: Path) -> None:
    from flows.pull import pull_documents, pull_metro_areas

    ids_file = tmp_path / "ids.txt"
    ids_file.write_text("missing-document\n")
    asyncio.run(pull_documents(ids=["also-missing"], ids_file=str(ids_file)))
    asyncio.run(pull_metro_areas(locodes=["USLAX", "ZZZZZ"]))
    con = analyst(flow_env)
    rows = con.execute("SELECT flow, status, not_found FROM sync_runs ORDER BY started_at").fetchall()
    con.close()
    assert rows[0][:2] == ("pull_documents", "completed_with_errors")
    assert sorted(rows[0][2]) == ["also-missing", "missing-document"]
    assert rows[1][1:] == ("completed_with_errors", ["ZZZZZ"])
    assert "**Not found (1):** ZZZZZ" in asyncio.run(_artifacts("pull-metro-areas"))[0]


@pytest.mark.slow
def test_each_declared_pull_is_a_flow_named_as_its_ledger_runs() -> None:
    """prefect.yaml's entrypoints (`flows/pull.py:pull_documents`) find a flow per declaration,
    named as the ledger names its runs, whose parameters are the declaration's options."""
    import flows.pull

    from shipsync.pull.everything import EVERY_PULL

    for resource in EVERY_PULL:
        made = getattr(flows.pull, resource.flow)
        assert made.name == resource.flow
        assert list(made.parameters.properties) == [option.parameter for option in resource.options]
