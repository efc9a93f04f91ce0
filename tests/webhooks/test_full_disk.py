"""A full disk (issue 36, item 8), on a real small file system (`support.small_disk`: a tmpfs
mounted for the test, filled until the kernel answers ENOSPC): the receiver answers 503 (the
service retries) and leaves no empty segment or quarantine file however many deliveries it
refuses, and stores again once there is room; `events load` leaves no empty `spool-id` and makes
one again over an empty one an older loader left; a full TMPDIR ends a command with one line."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from shipsync.cli import app
from shipsync.webhooks.framing import encode_record
from shipsync.webhooks.load import load_events
from shipsync.webhooks.receiver import Receiver
from shipsync.webhooks.signature import sign
from shipsync.webhooks.spool import SPOOL_ID_FILE
from shipsync.webhooks.writer import SpoolWriter
from shipsync_sandbox.serving import BackgroundServer
from support.http import HTTP
from support.lake import location
from support.sandboxes import SandboxFactory, shipsync_env
from support.small_disk import small_disk
from support.waiting import HANG_S

SECRET = "full-disk-webhook-secret-0123"


def notification(number: int, padding: int = 0) -> bytes:
    attributes = {"event": "container.updated", "created_at": datetime.now(UTC).isoformat(), "note": "n" * padding}
    return orjson.dumps({"data": {"id": f"ntf-{number}", "type": "webhook_notification", "attributes": attributes}})


def deliver(url: str, body: bytes) -> int:
    return HTTP.post(f"{url}/webhook", content=body, headers={"X-T49-Webhook-Signature": sign(SECRET, body)}).status_code


def spooled(spool: Path, bodies: list[bytes]) -> Path:
    spool.mkdir(mode=0o700)
    (spool / "segment-00000000000000000001-1.spool").write_bytes(b"".join(encode_record(body, 0) for body in bodies))
    return spool


def test_a_full_disk_fails_deliveries_leaves_no_empty_file_and_recovers(tmp_path: Path) -> None:
    with small_disk(tmp_path / "disk") as disk:
        spool = disk.path / "spool"
        writer = SpoolWriter(spool)
        try:
            with BackgroundServer(Receiver(writer, [SECRET])) as receiver:
                assert deliver(receiver.url, notification(0)) == 200  # a segment with a record already
                disk.fill()
                refused = [deliver(receiver.url, notification(n, padding=8192)) for n in range(1, 9)]  # past a page
                not_a_notification = deliver(receiver.url, b'{"data": "%s"}' % (b"x" * 8192))  # would be quarantined
                files = disk.files()
                disk.free()
                stored = [deliver(receiver.url, notification(n)) for n in range(1, 4)]
        finally:
            writer.close()
        assert refused == [503] * 8 and not_a_notification == 503
        # The segment with the first delivery, cut back to it; no empty segment, no half-kept body.
        assert len(files) == 1 and files[0].startswith("spool/segment-"), files
        assert stored == [200] * 3
        report = load_events(location(tmp_path / "warehouse"), spool)
        assert report.loaded == 4 and report.dead_letters == 0


def test_events_load_on_a_full_disk_leaves_no_empty_spool_id(tmp_path: Path) -> None:
    env = {"SHIPSYNC_WAREHOUSE": str(tmp_path / "warehouse"), "COLUMNS": "300"}
    with small_disk(tmp_path / "disk") as disk:
        spool = spooled(disk.path / "spool", [notification(n) for n in range(3)])
        disk.fill()
        done = CliRunner().invoke(app, ["events", "load", "--spool", str(spool)], env=env)
        files = disk.files()
        (spool / SPOOL_ID_FILE).touch()  # what an older loader left on a full disk: an empty id
        disk.free()
        report = load_events(location(tmp_path / "warehouse"), spool)
        own = (spool / SPOOL_ID_FILE).read_text().strip()
    assert done.exit_code == 1, done.output
    lines = done.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: no space left on the device"), done.output
    # No spool-id, no temporary file (the load lock is an empty file by design).
    assert [f for f in files if f != "spool/load.lock"] == ["spool/segment-00000000000000000001-1.spool"]
    assert report.loaded == 3 and len(own) == 12


@pytest.mark.slow  # a command in a process of its own, pulling 120 documents
def test_a_full_temporary_folder_ends_a_command_with_one_line(make_sandbox: SandboxFactory, tmp_path: Path) -> None:
    """What a pull stages goes to TMPDIR: full, the command says so in one line (an 82-line
    traceback before). Room enough is left for Python to choose the folder at all."""
    sandbox = make_sandbox(documents=120)
    with small_disk(tmp_path / "tmp", size_kib=1024) as disk:
        disk.fill(leave=64 * 1024)
        env = {**os.environ, **shipsync_env(sandbox.api_url, tmp_path / "warehouse"), "TMPDIR": str(disk.path)}
        done = subprocess.run(
            [sys.executable, "-m", "shipsync", "pull", "documents", "--all"],
            env=env,
            capture_output=True,
            text=True,
            timeout=HANG_S,
            check=False,
        )
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1 and len(lines) == 1, done.stderr[-3000:]
    assert lines[0].startswith("error: no space left on the device"), lines
