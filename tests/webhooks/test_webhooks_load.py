"""`events load` step by step: dead letters that never block the records after them, conflicts
judged on the bodies' JSON and not on Python equality, batches bounded by bytes with memory flat
whatever the bodies, and registered webhooks that keep their headers' names only."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from shipsync.cli import app
from shipsync.json_text import body_key
from shipsync.webhooks import event_log
from shipsync.webhooks import load as load_module
from shipsync.webhooks.body_limits import MAX_VALUES
from shipsync.webhooks.framing import encode_record
from shipsync.webhooks.load import load_events
from shipsync.webhooks.registration import register_webhook
from shipsync.webhooks.spool import SpoolSizes
from support.lake import fetch, location, write_now
from support.sandboxes import RunningSandbox, settings_for


def notification(notification_id: str, **attributes: Any) -> bytes:
    data = {"id": notification_id, "type": "webhook_notification", "attributes": {"event": "container.updated", **attributes}}
    return orjson.dumps({"data": data, "included": []})


def spool_of(tmp_path: Path, bodies: list[bytes]) -> Path:
    spool = tmp_path / "spool"
    spool.mkdir(mode=0o700, parents=True, exist_ok=True)
    with (spool / f"segment-{len(list(spool.iterdir())):020d}-1.spool").open("wb") as segment:
        segment.write(b"".join(encode_record(body, 0) for body in bodies))
    return spool


@pytest.mark.slow
def test_a_record_that_cannot_be_loaded_is_dead_lettered_and_the_rest_load(tmp_path: Path) -> None:
    bodies = [notification("n-1"), b"not json at all", b'{"data": {"type": "webhook_notification"}}', notification("n-2")]
    spool, warehouse = spool_of(tmp_path, bodies), tmp_path / "w"
    report = load_events(location(warehouse), spool)
    assert (report.loaded, report.dead_letters) == (2, 2)
    dead = fetch(warehouse, "SELECT reason, body, notification_id FROM webhook_dead_letters ORDER BY end_offset")
    assert dead == [("body is not JSON", b"not json at all", None), ("no data.id", bodies[2], None)]
    assert load_events(location(warehouse), spool).dead_letters == 0  # once, like everything else
    assert fetch(warehouse, "SELECT count(*) FROM webhook_events") == [(2,)]
    status = CliRunner().invoke(app, ["status"], env={"SHIPSYNC_WAREHOUSE": str(warehouse), "COLUMNS": "200"})
    assert status.exit_code == 0 and "2 webhook notification(s) could not be loaded" in status.output


def test_a_value_the_warehouse_refuses_dead_letters_its_record_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Stands for data no check before the casts foresaw: the cast to `created_at`'s type refuses one
    notification's value (DuckDB's own refusal, raised as `ValueRefusedError`)."""
    refusing = event_log._EVENTS.replace(
        "CAST(created_at AS TIMESTAMPTZ)", "CAST(CASE WHEN notification_id = 'n-13' THEN 'not a time' ELSE created_at END AS TIMESTAMPTZ)"
    )
    monkeypatch.setattr(event_log, "_EVENTS", refusing)
    spool, warehouse = spool_of(tmp_path, [notification(f"n-{n}") for n in range(40)]), tmp_path / "w"
    report = load_events(location(warehouse), spool, SpoolSizes(load_records=25))
    assert (report.loaded, report.dead_letters) == (39, 1)
    [(notification_id, reason)] = fetch(warehouse, "SELECT notification_id, reason FROM webhook_dead_letters")
    assert notification_id == "n-13" and reason.startswith("cannot be loaded: the warehouse refused a value: Conversion Error")
    assert fetch(warehouse, "SELECT count(*) FROM webhook_events WHERE notification_id <> 'n-13'") == [(39,)]
    spool_of(tmp_path, [notification("n-40")])
    assert load_events(location(warehouse), spool).loaded == 1  # the checkpoint moved past it


def test_a_fault_in_the_code_stops_the_load_loudly_and_commits_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A step that fails on a Python error (a bug, not bad data) fails the run; no notification is
    dead-lettered for it, and once the step is fixed every one loads."""
    entities = event_log._entities

    def fails_on_one(parsed: list[Any], seqs: list[int]) -> Any:
        if any(p.notification_id == "n-13" for p in parsed):
            raise TypeError("a bug in a step")
        return entities(parsed, seqs)

    spool, warehouse = spool_of(tmp_path, [notification(f"n-{n}") for n in range(40)]), tmp_path / "w"
    with monkeypatch.context() as patch:
        patch.setattr(event_log, "_entities", fails_on_one)
        with pytest.raises(TypeError, match="a bug in a step"):
            load_events(location(warehouse), spool, SpoolSizes(load_records=25))
    assert fetch(warehouse, "SELECT count(*) FROM webhook_events") == [(0,)]
    assert fetch(warehouse, "SELECT count(*) FROM webhook_dead_letters") == [(0,)]
    assert fetch(warehouse, "SELECT status FROM sync_runs WHERE flow = 'load_events'") == [("failed",)]
    report = load_events(location(warehouse), spool, SpoolSizes(load_records=25))
    assert (report.loaded, report.dead_letters) == (40, 0)


def test_conflicts_are_judged_on_json_not_on_python_equality(tmp_path: Path) -> None:
    def body(flag: str, spacing: str = "") -> bytes:
        return b'{"data": {"id": "same", "type": "webhook_notification", "attributes": {"flag": %s}},%s"included": []}' % (
            flag.encode(),
            spacing.encode(),
        )

    # true, 1 and 1.0 are equal in Python and three different bodies in JSON; spacing and key
    # order are not differences.
    reordered = b'{"included": [], "data": {"attributes": {"flag": true}, "type": "webhook_notification", "id": "same"}}'
    spool, warehouse = spool_of(tmp_path, [body("true"), body("1"), body("1.0"), body("true", "   "), reordered]), tmp_path / "w"
    report = load_events(location(warehouse), spool)
    assert (report.loaded, report.conflicts, report.duplicates) == (1, 2, 2)
    assert sorted(r[0] for r in fetch(warehouse, "SELECT payload->'$.data.attributes.flag' FROM webhook_event_conflicts")) == ["1", "1.0"]
    assert (body_key(b'{"a": 1.0}') == body_key(b'{"a":1.00}')) and body_key(b'{"a": 1}') != body_key(b'{"a": 1.0}')
    # Integers beyond 64 bits are told apart (read as floats, these two were one body).
    assert body_key(b'{"a": 18446744073709551616}') != body_key(b'{"a": 18446744073709551617}')


def test_batches_are_bounded_by_bytes(tmp_path: Path) -> None:
    bodies = [notification(f"n-{n}", padding="x" * 10_000) for n in range(30)]
    spool = spool_of(tmp_path, bodies)
    batches = list(load_module.read_batches(spool, {}, SpoolSizes(load_records=1000, load_bytes=50_000)))
    assert [len(b.records) for b in batches] == [5] * 6
    assert batches[-1].progress == {batches[-1].records[-1].segment: batches[-1].records[-1].end_offset}


MEMORY_SCRIPT = textwrap.dedent(
    """
    import re, sys
    from pathlib import Path
    from shipsync.warehouse_location import lake_location
    from shipsync.webhooks.load import load_events
    report = load_events(lake_location(sys.argv[1]), Path(sys.argv[2]))
    assert report.loaded == int(sys.argv[3]), report
    # VmHWM, not ru_maxrss: the latter keeps the RSS of the parent that forked this process.
    print(int(re.search(r"VmHWM:\\s+(\\d+)", open("/proc/self/status").read()).group(1)) // 1024)
    """
)


@pytest.mark.slow
def test_memory_stays_flat_with_1_mib_bodies_of_empty_objects(tmp_path: Path) -> None:
    """1 MiB signed bodies of as many `{}`s as the limits let through (`body_limits.MAX_VALUES`; a
    megabyte of them, which parses into ~37 MB of objects, is refused before parsing): 60 of them
    cost 2.4 GB when a batch held every parsed body. Measured: the whole load, staging and commit."""
    envelope = notification("x")[:-2]  # up to `"included":[`
    filler = b"{}," * (MAX_VALUES - 100)
    padding = b'{"padding": "' + b"p" * (1024 * 1024 - len(envelope) - len(filler) - 20) + b'"}'
    peaks = {}
    for count in (10, 60):
        bodies = [envelope.replace(b'"x"', b'"m-%d"' % n) + filler + padding + b"]}" for n in range(count)]
        assert all(len(b) > 1_000_000 for b in bodies)
        spool = spool_of(tmp_path / str(count), bodies)
        script = [sys.executable, "-c", MEMORY_SCRIPT, str(tmp_path / f"w{count}"), str(spool), str(count)]
        peaks[count] = int(subprocess.run(script, capture_output=True, text=True, check=True).stdout)
    # MB. Holding the parsed bodies costs ~10 MB per record (500 MB for the 50 more); the load
    # stages the 1 MiB payloads and DuckDB keeps what it wrote in its buffers (~50 MB more of bodies).
    assert peaks[60] - peaks[10] < 250, peaks
    assert peaks[60] < 600, peaks


def test_webhooks_keep_their_headers_names_only(sandbox: RunningSandbox, warehouse: Path) -> None:
    settings = settings_for(sandbox, warehouse)
    register_webhook(settings, "http://127.0.0.1:9/hook", ["container.updated"], headers=[("Authorization", "Bearer tok-9f2e71")])
    assert fetch(warehouse, "SELECT headers FROM webhooks") == [([{"name": "Authorization"}],)]
    assert all(b"tok-9f2e71" not in f.read_bytes() for f in warehouse.rglob("*") if f.is_file())


def test_a_new_warehouse_folder_is_private(tmp_path: Path) -> None:
    write_now(tmp_path / "fresh", {})
    assert (tmp_path / "fresh").stat().st_mode & 0o777 == 0o700
