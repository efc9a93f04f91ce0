"""`apply undo` respects the present: a value someone changed at the service since the run stays
(skipped, and said so per cell in the results file and the terminal), one already as it was is
left alone, the rest is put back; and a run that stopped before its commit (killed at any moment)
can still be undone completely, from the journal it kept before each write was sent."""

from __future__ import annotations

import asyncio
import csv
import os
import random
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from shipsync.bulk.apply import apply_file
from shipsync.bulk.journal import JournalHeader, WriteJournal, journal_folder
from shipsync.bulk.model import Change
from shipsync.bulk.undo import undo_run
from shipsync.cli.apply_cmd import print_report
from shipsync.config import Settings
from shipsync.errors import InputError
from shipsync.json_text import dumps
from shipsync.pull.documents import pull_documents
from support.lake import analyst
from support.sandboxes import K1, RunningSandbox, SandboxFactory, service_values, settings_for, shipsync_env
from support.warehouse_rows import container_numbers


def write_csv(path: Path, table: list[list[str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as out:
        csv.writer(out).writerows(table)
    return path


def value_ids(sandbox: RunningSandbox) -> dict[tuple[str, str], str]:
    account = sandbox.state.world.accounts[K1]
    return {(cf["relationships"]["entity"]["data"]["id"], cf["attributes"]["api_slug"]): cf["id"] for cf in account.custom_fields.values()}


def container_ids(settings: Settings, numbers: list[str]) -> list[str]:
    with analyst(settings.warehouse) as con:
        found = dict(con.execute("SELECT number, id FROM containers WHERE list_contains(?, number)", [numbers]).fetchall())
    return [found[n] for n in numbers]


def test_undo_leaves_what_someone_changed_since_and_says_so(
    pulled: tuple[RunningSandbox, Settings], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sandbox, settings = pulled
    numbers = container_numbers(settings.warehouse, 3)
    first, second, third = container_ids(settings, numbers)
    file = write_csv(
        tmp_path / "po.csv", [["container_number", "po_number", "priority"], *[[n, f"PO-{i}", "high"] for i, n in enumerate(numbers)]]
    )
    before = service_values(sandbox)
    said: list[str] = []
    applied = apply_file(settings, "custom-fields", file, notice=said.append)
    assert applied.counts["applied"] == 6
    assert said == [f"run {applied.run_id} sends 6 changes: `shipsync apply undo {applied.run_id}` puts back what it sent"]
    docs = (Path(__file__).parents[2] / "docs" / "spreadsheets.md").read_text()
    assert said[0].replace(applied.run_id, "6f3a…-…").replace("6 changes", "480 changes") in docs  # told before anything is sent

    async def colleague() -> None:  # in the app, after the run
        ids = value_ids(sandbox)
        async with sandbox.client() as client:
            await client.custom_fields.update(ids[(first, "po_number")], "PO-COLLEAGUE")
            await client.custom_fields.delete(ids[(second, "priority")])

    asyncio.run(colleague())
    undone = undo_run(settings, applied.run_id)
    after = service_values(sandbox)
    assert after[(first, "po_number")] == "PO-COLLEAGUE"  # theirs stays
    assert after == {**before, (first, "po_number"): "PO-COLLEAGUE"}  # the rest is as before the run
    by_cell = {(c.entity_id, c.field): c for c in undone.changes}
    assert by_cell[(first, "po_number")].status == "skipped" and by_cell[(second, "priority")].status == "unchanged"
    assert +undone.counts == {"applied": 4, "skipped": 1, "unchanged": 1}

    assert undone.results_file == tmp_path / "po.csv.custom-fields.undo.results.csv"
    with undone.results_file.open(encoding="utf-8-sig", newline="") as results:
        lines = {(r["entity_id"], r["field"]): r for r in csv.DictReader(results)}
    assert len(lines) == 6
    skipped = lines[(first, "po_number")]
    assert (skipped["status"], skipped["the run left"], skipped["now"], skipped["put back"]) == ("skipped", '"PO-0"', '"PO-COLLEAGUE"', "")
    assert "changed at the service since the run" in skipped["detail"]
    documented = " ".join((Path(__file__).parents[2] / "docs" / "spreadsheets.md").read_text().split())
    with undone.results_file.open(encoding="utf-8-sig", newline="") as written:
        header = written.readline().strip()
    assert header in documented and skipped["detail"].replace('"', '""') in documented  # the docs' example is the code's
    put_back = lines[(third, "po_number")]
    assert (put_back["status"], put_back["now"], put_back["put back"]) == ("applied", '"PO-2"', "none")

    print_report(undone)
    printed = capsys.readouterr().out
    assert "1 skipped" in printed and 'changed at the service since the run: it is "PO-COLLEAGUE" now, the run left "PO-0"' in printed
    again = undo_run(settings, applied.run_id)  # what was left alone is tried again, and left again
    assert +again.counts == {"skipped": 1} and service_values(sandbox)[(first, "po_number")] == "PO-COLLEAGUE"


def test_a_journal_nobody_holds_is_folded_in_and_its_writes_undone(pulled: tuple[RunningSandbox, Settings], tmp_path: Path) -> None:
    """A run that died after sending: its journal says what it was about to write, and nothing after."""
    sandbox, settings = pulled
    first, second = container_ids(settings, container_numbers(settings.warehouse, 2))
    before = service_values(sandbox)
    run_id = "00000000-dead-4000-8000-000000000001"
    header = JournalHeader(run_id, "custom-fields", str(tmp_path / "po.csv"), None, {"file": "po.csv"})
    dead = WriteJournal(journal_folder(settings), header)
    intended = [Change(2, "container", cid, "po_number", "create", None, f"PO-{n}", payload={}) for n, cid in enumerate((first, second))]
    dead.intend(intended)

    async def sent_then_died() -> None:  # the first write reached the service, the second never left
        async with sandbox.client() as client:
            await client.custom_fields.create(entity_type="container", entity_id=first, api_slug="po_number", value="PO-0")

    asyncio.run(sent_then_died())
    live = WriteJournal(journal_folder(settings), JournalHeader("00000000-1ive-4000-8000-000000000002", "custom-fields", None, None, {}))
    dead.close()  # the process died: its lock went with it; `live` still holds its own
    undone = undo_run(settings, run_id)
    assert service_values(sandbox) == before
    assert sorted(c.status for c in undone.changes) == ["applied", "unchanged"]  # the one sent is taken back
    assert [r.header.run_id for r in undone.recovered] == [run_id]
    with analyst(settings.warehouse) as con:
        ledger = con.execute("SELECT status, errors FROM sync_runs WHERE run_id = ?", [run_id]).fetchall()
        statuses = con.execute("SELECT status FROM bulk_results WHERE run_id = ?", [run_id]).fetchall()
    assert ledger[0][0] == "failed" and "stopped before its commit" in ledger[0][1][0] and len(ledger) == 1
    assert statuses == [("unknown",), ("unknown",)]
    assert not dead.path.exists() and live.path.exists()  # folded, then gone; the live run's is its own
    live.close()
    with pytest.raises(InputError, match="already undone"):
        undo_run(settings, run_id)


@pytest.mark.slow
def test_undo_leaves_a_definition_someone_edited_since_and_puts_back_its_options(
    sandbox: RunningSandbox, warehouse: Path, tmp_path: Path
) -> None:
    settings = settings_for(sandbox, warehouse)
    header = ["entity_type", "api_slug", "display_name", "data_type", "options"]
    apply_file(
        settings,
        "custom-field-definitions",
        write_csv(tmp_path / "d1.csv", [header, ["Container", "broker", "Broker", "enum", "acme; globex"]]),
    )
    edit = write_csv(tmp_path / "d2.csv", [header, ["Container", "broker", "Customs broker", "enum", "acme=Acme Corp; globex"]])
    edited = apply_file(settings, "custom-field-definitions", edit)
    assert edited.counts["applied"] == 2  # the display name, the option's label
    world = sandbox.state.world
    broker = world.definition_by_slug(world.accounts[K1], "broker")
    assert broker is not None

    async def colleague() -> None:
        async with sandbox.client() as client:
            await client.custom_field_definitions.update(broker["id"], {"display_name": "Brokerage"})

    asyncio.run(colleague())
    undone = undo_run(settings, edited.run_id)
    assert {c.field: c.status for c in undone.changes} == {"display_name": "skipped", "acme": "applied"}
    assert broker["attributes"]["display_name"] == "Brokerage"
    assert {o["attributes"]["value"]: o["attributes"]["label"] for o in world.options_of(world.accounts[K1], broker["id"])} == {
        "acme": "Acme",
        "globex": "Globex",
    }


@pytest.mark.slow
def test_a_run_killed_at_random_moments_can_always_be_undone_completely(
    make_sandbox: SandboxFactory, warehouse: Path, tmp_path: Path
) -> None:
    sandbox = make_sandbox(documents=80, seed=11)
    settings = settings_for(sandbox, warehouse)
    pull_documents(settings, all_documents=True)
    numbers = container_numbers(warehouse, 50)
    account = sandbox.state.world.accounts[K1]
    # Half the boxes have a PO number already: each round changes those and creates the rest.
    apply_file(
        settings,
        "custom-fields",
        write_csv(tmp_path / "base.csv", [["container_number", "po_number"], *[[n, "PO-BASE"] for n in numbers[:25]]]),
    )
    base = len(account.custom_fields)
    sandbox.app.state.options = type(sandbox.app.state.options)(**{**sandbox.app.state.options.__dict__, "latency_ms": 20.0})
    env = {**os.environ, **shipsync_env(sandbox.api_url, warehouse), "PREFECT_SERVER_ANALYTICS_ENABLED": "false"}
    draw = random.Random(36)
    stages: list[tuple[int, int]] = []
    for round_number in range(6):
        rows = [["container_number", "po_number", "priority"]]
        rows += [[n, f"PO-{round_number}-{i}", ["low", "high", "normal"][(i + round_number) % 3]] for i, n in enumerate(numbers)]
        file = write_csv(tmp_path / f"round-{round_number}.csv", rows)
        before = service_values(sandbox)
        with analyst(warehouse) as con:
            runs_before = {r[0] for r in con.execute("SELECT run_id FROM sync_runs").fetchall()}
        # Killed once a random number of the round's 75 creates (beside its 25 changes) reached the
        # service (0: at start-up; 75: during or after its commit), then a random few ms later.
        kill_after = draw.choice([0, draw.randint(1, 74), draw.randint(1, 74), 75])
        command = [sys.executable, "-m", "shipsync", "apply", "custom-fields", str(file)]
        apply = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 300  # a loaded machine's imports can take most of a minute
        while apply.poll() is None and len(account.custom_fields) - base < kill_after and time.monotonic() < deadline:
            time.sleep(0.005)
        time.sleep(draw.uniform(0, 0.05))
        apply.send_signal(signal.SIGKILL)
        apply.wait()
        time.sleep(0.2)  # a request the server took before the kill is answered to nobody, but done
        changed = sum(1 for k, v in service_values(sandbox).items() if before.get(k) != v)
        stages.append((kill_after, changed))

        folder = journal_folder(settings)
        journaled = {p.name.removesuffix(".journal") for p in folder.glob("*.journal")} if folder.is_dir() else set()
        with analyst(warehouse) as con:
            committed = {r[0] for r in con.execute("SELECT run_id FROM sync_runs").fetchall()} - runs_before
        killed = sorted(journaled | committed)
        assert len(killed) <= 1, killed
        if not killed:  # killed before its first write was about to be sent
            assert changed == 0, stages
            continue
        try:
            undone = undo_run(settings, killed[0])
        except InputError as exc:  # its journal began, and it was killed before saying what it would send
            assert "changed nothing that can be undone" in str(exc) and changed == 0, stages
            continue
        assert service_values(sandbox) == before, (stages, undone.counts)
        assert not undone.counts["failed"] and not undone.counts["skipped"] and not undone.counts["unknown"], undone.counts
        assert len(account.custom_fields) == base  # nothing created twice, nothing left over
    assert any(0 < changed < 100 for _, changed in stages), stages  # at least one kill landed mid-run


def test_the_journal_is_private_and_a_link_planted_beside_it_is_never_followed(
    sandbox: RunningSandbox, warehouse: Path, tmp_path: Path
) -> None:
    settings = settings_for(sandbox, warehouse)
    folder = journal_folder(settings)
    journal = WriteJournal(folder, JournalHeader("00000000-0000-4000-8000-00000000000a", "custom-fields", None, None, {}))
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700 and stat.S_IMODE(journal.path.stat().st_mode) == 0o600
    journal.close()
    journal.remove()
    # Elsewhere, a file written as a journal would be (it would have an undo write what it says).
    planted = tmp_path / "planted.journal"
    header = {"run_id": "00000000-0000-4000-8000-00000000000b", "kind": "stop-tracking", "file": None, "sheet": None, "parameters": {}}
    intent = {"row": 2, "entity_type": "shipment", "entity_id": "s-1", "field": "tracking", "action": "update", "resource_id": "s-1"}
    planted.write_text(
        dumps({"run": header}) + "\n" + dumps({"seq": 0, "intent": {**intent, "before": "tracking", "after": "stopped"}}) + "\n"
    )
    (folder / "00000000-0000-4000-8000-00000000000b.journal").symlink_to(planted)
    odd = folder / "00000000-0000-4000-8000-00000000000c.journal"  # of another shape: left, and no run fails on it
    odd.write_text(dumps({"run": {"run_id": "x", "written_by": "a later version"}}) + "\n")
    write_csv(tmp_path / "none.csv", [["shipment_id"], ["no-such-shipment"]])
    report = apply_file(settings, "stop-tracking", tmp_path / "none.csv")  # a run folds journals first
    assert report.recovered == [] and planted.exists()  # the link is not followed: nothing folded from it
    assert odd.exists()
