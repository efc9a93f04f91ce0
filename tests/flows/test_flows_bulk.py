"""The bulk flows run as real Prefect flows: apply a spreadsheet (with a table artifact), then undo it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from support.lake import analyst
from support.sandboxes import RunningSandbox
from support.waiting import wait_for


@pytest.mark.slow
def test_apply_and_undo_flows(prefect_harness: None, flow_env: Path, sandbox: RunningSandbox, tmp_path: Path) -> None:
    # Imported here: collecting the fast tier, which leaves this test out, need not import Prefect.
    from flows.bulk import apply_spreadsheet, undo_apply
    from flows.pull import pull_documents

    asyncio.run(pull_documents(all_documents=True))
    con = analyst(flow_env)
    numbers = [r[0] for r in con.execute("SELECT number FROM containers ORDER BY id LIMIT 3").fetchall()]
    con.close()
    sheet = tmp_path / "tags.csv"
    sheet.write_text("container_number,priority\n" + "".join(f"{n},high\n" for n in numbers) + "NOTACONTAINER,low\n")
    run_id = asyncio.run(apply_spreadsheet(kind="custom-fields", file=str(sheet)))
    account = next(iter(sandbox.state.world.accounts.values()))
    assert len(account.custom_fields) == 3
    asyncio.run(undo_apply(run_id=run_id))
    assert account.custom_fields == {}
    con = analyst(flow_env)
    statuses = dict(con.execute("SELECT status, count(*) FROM bulk_results WHERE run_id = ? GROUP BY 1", [run_id]).fetchall())
    con.close()
    assert statuses == {"applied": 3, "rejected": 1}


@pytest.mark.slow
def test_new_tracking_then_stop_tracking_flows(prefect_harness: None, flow_env: Path, sandbox: RunningSandbox, tmp_path: Path) -> None:
    from flows.bulk import apply_spreadsheet, undo_apply

    account = next(iter(sandbox.state.world.accounts.values()))
    start = tmp_path / "start.csv"
    start.write_text("request_type,request_number,scac\nbill_of_lading,MAEU987654321,MAEU\n")
    asyncio.run(apply_spreadsheet(kind="new-tracking", file=str(start)))
    made = [t for t in account.tracking_requests.values() if t["attributes"]["request_number"] == "MAEU987654321"]
    assert len(made) == 1
    # The sandbox settles a request a while after answering.
    wait_for(lambda: made[0]["attributes"]["status"] != "pending", "the tracking request to settle")
    shipment_id = made[0]["relationships"]["tracked_object"]["data"]["id"]

    stop = tmp_path / "stop.csv"
    stop.write_text("request_number\nMAEU987654321\n")
    run_id = asyncio.run(apply_spreadsheet(kind="stop-tracking", file=str(stop)))
    assert shipment_id in account.stopped
    asyncio.run(undo_apply(run_id=run_id))
    assert shipment_id not in account.stopped
