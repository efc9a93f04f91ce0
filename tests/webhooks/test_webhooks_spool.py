"""The spool's own guarantees: framing that survives any bytes, torn and zero-filled tails, segment
locks and lengths, group commit, rotation, and a failed write that leaves no torn record behind."""

from __future__ import annotations

import asyncio
import errno
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shipsync.errors import ConfigError
from shipsync.safe_files import UnsafePathError
from shipsync.webhooks.framing import encode_record, read_records
from shipsync.webhooks.load import archive_consumed, load_events
from shipsync.webhooks.spool import SpoolFolder, SpoolSizes, is_finished, segments
from shipsync.webhooks.writer import SpoolWriter
from support.lake import location
from support.waiting import HANG_S


@given(st.lists(st.binary(max_size=300), max_size=20))
@settings(max_examples=50)
def test_any_bytes_round_trip(bodies: list[bytes]) -> None:
    data = b"".join(encode_record(body, n % 3, 1_700_000_000_000_000_000) for n, body in enumerate(bodies))
    path = Path(os.environ.get("TMPDIR", "/tmp")) / f"roundtrip-{os.getpid()}.spool"
    path.write_bytes(data + bytes(1000))  # a zero-filled tail, as a live segment has
    try:
        records = list(read_records(path))
    finally:
        path.unlink()
    assert [r.body for r in records] == bodies
    assert [r.secret_index for r in records] == [n % 3 for n in range(len(bodies))]
    assert not records or records[-1].end_offset == len(data)
    assert all(r.received_at.startswith("2023-11-14T22:13:20") for r in records)


@pytest.mark.parametrize("cut", ["header", "body", "newline", "checksum"])
def test_a_torn_last_record_is_not_read(tmp_path: Path, cut: str) -> None:
    whole = encode_record(b'{"data": 1}', 0) + encode_record(b'{"data": 2}', 0)
    last = encode_record(b'{"data": 3}', 0)
    torn = {
        "header": last[:10],
        "body": last[:-4],
        "newline": last[:-1] + b"\0",
        "checksum": last.replace(b'{"data": 3}', b'{"data": 4}'),
    }[cut]
    path = tmp_path / "segment-1-1.spool"
    path.write_bytes(whole + torn + bytes(64))
    records = list(read_records(path))
    assert [r.body for r in records] == [b'{"data": 1}', b'{"data": 2}']
    assert list(read_records(path, records[-1].end_offset)) == []


def write(writer: SpoolWriter, bodies: list[bytes]) -> None:
    async def go() -> None:
        await asyncio.gather(*(writer.append(encode_record(body, 0)) for body in bodies))

    asyncio.run(go())


def test_a_live_segment_is_locked_and_a_closed_one_ends_at_its_last_record(tmp_path: Path) -> None:
    writer = SpoolWriter(tmp_path)
    write(writer, [b"one", b"two"])
    (segment,) = segments(tmp_path)
    assert not is_finished(segment)
    assert [r.body for r in read_records(segment)] == [b"one", b"two"]
    assert segment.stat().st_size == list(read_records(segment))[-1].end_offset  # appended, nothing written ahead
    folder = SpoolFolder(tmp_path)
    assert archive_consumed(folder, {segment.name: segment.stat().st_size}) == []  # held by its writer
    writer.close()
    assert is_finished(segment)
    assert archive_consumed(folder, {segment.name: segment.stat().st_size}) == [segment.name]
    assert (tmp_path / "archive" / segment.name).is_file()


def test_deliveries_arriving_together_share_a_sync(tmp_path: Path) -> None:
    writer = SpoolWriter(tmp_path)
    bodies = [b"%d" % n for n in range(500)]
    write(writer, bodies)
    writer.close()
    assert writer.records == 500 and writer.fsyncs < 50
    assert [r.body for p in segments(tmp_path) for r in read_records(p)] == bodies


def test_segments_rotate(tmp_path: Path) -> None:
    writer = SpoolWriter(tmp_path, sizes=SpoolSizes(segment_bytes=64 * 1024))
    bodies = [b"x" * 1000 + str(n).encode() for n in range(300)]
    for start in range(0, 300, 30):
        write(writer, bodies[start : start + 30])
    writer.close()
    assert len(segments(tmp_path)) >= 4
    assert all(p.stat().st_size <= 64 * 1024 for p in segments(tmp_path))
    assert [r.body for p in segments(tmp_path) for r in read_records(p)] == bodies
    assert all(is_finished(p) for p in segments(tmp_path))
    assert writer.records == 300


FAILING_WRITES = textwrap.dedent(
    """
    import asyncio, resource, signal, sys
    from pathlib import Path
    from shipsync.webhooks.framing import encode_record
    from shipsync.webhooks.writer import SpoolWriter

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
    resource.setrlimit(resource.RLIMIT_FSIZE, (10_000, 10_000))
    writer = SpoolWriter(Path(sys.argv[1]))

    async def deliver(body: bytes) -> str:
        try:
            await writer.append(encode_record(body, 0))
        except OSError as exc:
            return f"{body.decode()[:7]} failed {exc.errno}"
        return f"{body.decode()[:7]} stored"

    async def go() -> None:
        for n in range(4):
            print(await deliver(b"small-%d" % n + b"s" * 2000))  # 2,030 bytes a record: four fit
        print(await deliver(b"big-one" + b"b" * 3000))  # crosses the limit: written in part, then EFBIG
        print(await deliver(b"after-1" + b"a" * 100))

    asyncio.run(go())
    writer.close()
    """
)


def test_a_failed_write_is_refused_cut_off_and_never_followed(tmp_path: Path) -> None:
    """A real failed write (the file size limit): its delivery gets the error, the segment is cut
    back to its last synced record, and the next delivery goes to a new segment, readable."""
    result = subprocess.run([sys.executable, "-c", FAILING_WRITES, str(tmp_path)], capture_output=True, text=True, check=True)
    assert result.stdout.split("\n")[:6] == [*(f"small-{n} stored" for n in range(4)), f"big-one failed {errno.EFBIG}", "after-1 stored"]
    first, second = segments(tmp_path)
    assert first.stat().st_size == list(read_records(first))[-1].end_offset  # nothing of the failed record left
    assert [r.body[:7] for p in (first, second) for r in read_records(p)] == [b"small-0", b"small-1", b"small-2", b"small-3", b"after-1"]


def test_the_spool_is_created_private_and_an_unsafe_one_is_refused(tmp_path: Path) -> None:
    writer = SpoolWriter(tmp_path / "spool")
    writer.quarantine(b"not a notification", "no data object")
    writer.close()
    load_events(location(tmp_path / "w"), tmp_path / "spool")  # makes archive/
    for folder in ("spool", "spool/quarantine", "spool/archive"):
        assert (tmp_path / folder).stat().st_mode & 0o777 == 0o700, folder
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    shared.chmod(0o777)  # anyone may plant a link here
    with pytest.raises(UnsafePathError, match="others may write"):
        SpoolWriter(shared)
    with pytest.raises(UnsafePathError, match="others may write"):
        load_events(location(tmp_path / "w"), shared)
    if os.geteuid() == 0:  # only root can hand a folder to someone else here
        theirs = tmp_path / "theirs"
        theirs.mkdir(mode=0o700)
        os.chown(theirs, 4321, -1)
        with pytest.raises(UnsafePathError, match="not by you"):
            SpoolWriter(theirs)


def test_links_in_place_of_quarantine_and_archive_are_not_followed(tmp_path: Path) -> None:
    spool, elsewhere = tmp_path / "spool", tmp_path / "elsewhere"
    elsewhere.mkdir()
    writer = SpoolWriter(spool)
    (spool / "quarantine").symlink_to(elsewhere)
    with pytest.raises(UnsafePathError):
        writer.quarantine(b"not a notification", "no data object")
    write(writer, [b'{"data": {"id": "n", "type": "webhook_notification"}}'])
    writer.close()
    (spool / "archive").symlink_to(elsewhere)
    with pytest.raises(UnsafePathError):
        load_events(location(tmp_path / "w"), spool)
    assert list(elsewhere.iterdir()) == []  # nothing was written or moved through the links
    (spool / "archive").unlink()
    (spool / "quarantine").unlink()
    assert load_events(location(tmp_path / "w"), spool).archived == [p.name for p in (spool / "archive").iterdir()]


def test_quarantined_bodies_keep_their_reason(tmp_path: Path) -> None:
    folder = SpoolFolder(tmp_path)
    name = folder.quarantine(b"\xff body", "body is not JSON")
    assert (tmp_path / "quarantine" / name).read_bytes() == b"\xff body"
    assert (tmp_path / "quarantine" / name.replace(".bin", ".reason")).read_text() == "body is not JSON\n"
    assert (tmp_path / "quarantine").stat().st_mode & 0o777 == 0o700
    folder.close()


def test_the_receiver_never_creates_the_spools_parents(tmp_path: Path) -> None:
    """By default the spool's parent is the warehouse's folder, which the warehouse makes 0700:
    a receiver started first used to make it, 0755 (the umask's)."""
    with pytest.raises(ConfigError, match=f"its folder {tmp_path / 'warehouse'} does not exist"):
        SpoolWriter(tmp_path / "warehouse" / "spool")
    env = {**os.environ, "SHIPSYNC_WAREHOUSE": str(tmp_path / "new" / "w"), "SHIPSYNC_WEBHOOK_SECRETS": "whsec-folders-test-01"}
    serve = subprocess.run([sys.executable, "-m", "shipsync", "webhooks", "serve"], env=env, capture_output=True, text=True, timeout=HANG_S)
    assert serve.returncode == 1 and f"its folder {tmp_path / 'new' / 'w'} does not exist" in serve.stderr + serve.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == []
