"""The spool's own guarantees: framing that survives any bytes, torn and zero-filled tails, segment
locks and lengths, rotation, and a writer whose fsync helper dies."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shipsync.safe_files import UnsafePathError
from shipsync.webhooks.framing import encode_record, read_records
from shipsync.webhooks.load import archive_consumed, load_events
from shipsync.webhooks.spool import SpoolFolder, SpoolSizes, is_finished, segments
from shipsync.webhooks.writer import SpoolWriter
from support.lake import location


@given(st.lists(st.binary(max_size=300), max_size=20))
@settings(max_examples=50, deadline=None)
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
    assert segment.stat().st_size >= SpoolSizes().extent_bytes  # zeros written ahead
    assert not is_finished(segment)
    assert [r.body for r in read_records(segment)] == [b"one", b"two"]
    folder = SpoolFolder(tmp_path)
    assert archive_consumed(folder, {segment.name: next(iter(reversed(list(read_records(segment))))).end_offset}) == []
    writer.close()
    assert is_finished(segment)
    assert segment.stat().st_size == list(read_records(segment))[-1].end_offset
    assert archive_consumed(folder, {segment.name: segment.stat().st_size}) == [segment.name]
    assert (tmp_path / "archive" / segment.name).is_file()


def test_segments_rotate_and_extents_grow(tmp_path: Path) -> None:
    writer = SpoolWriter(tmp_path, sizes=SpoolSizes(segment_bytes=64 * 1024, extent_bytes=4096))
    bodies = [b"x" * 1000 + str(n).encode() for n in range(300)]
    for start in range(0, 300, 30):
        write(writer, bodies[start : start + 30])
    writer.close()
    assert len(segments(tmp_path)) >= 4
    assert [r.body for p in segments(tmp_path) for r in read_records(p)] == bodies
    assert all(is_finished(p) for p in segments(tmp_path))
    assert writer.records == 300


def test_the_helper_zeroes_extents_ahead_and_records_never_land_in_its_way(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    inline: list[int] = []
    extend = SpoolWriter._extend
    monkeypatch.setattr(SpoolWriter, "_extend", lambda self, needed: (inline.append(needed), extend(self, needed)))
    writer = SpoolWriter(tmp_path, sizes=SpoolSizes(extent_bytes=8192))
    bodies = [b"%d-" % n + b"y" * 300 for n in range(1000)]
    for start in range(0, 1000, 5):  # small batches: the helper keeps ahead, each in a new event loop
        write(writer, bodies[start : start + 5])
    (segment,) = segments(tmp_path)
    assert inline == [0]  # only the segment's first extent was zeroed in the receiver
    assert segment.stat().st_size >= 320_000
    write(writer, [b"z" * 20_000] * 3)  # more than the headroom: waits for the helper, or zeroes inline
    writer.close()
    assert [r.body for p in segments(tmp_path) for r in read_records(p)] == bodies + [b"z" * 20_000] * 3
    assert segment.stat().st_size == list(read_records(segment))[-1].end_offset


def test_when_the_fsync_helper_dies_the_writer_syncs_itself(tmp_path: Path) -> None:
    writer = SpoolWriter(tmp_path)
    write(writer, [b"before"])
    assert writer._helper is not None
    os.kill(writer._helper.process.pid, signal.SIGKILL)
    writer._helper.process.wait()

    async def go() -> list[BaseException | None]:
        results = await asyncio.gather(
            *(writer.append(encode_record(b, 0)) for b in [b"lost-ack-1", b"lost-ack-2"]), return_exceptions=True
        )
        await writer.append(encode_record(b"after", 0))  # inline from now on
        return results

    results = asyncio.run(go())
    # Written but never confirmed synced: those requests get an error (503), and the service retries.
    assert all(isinstance(r, OSError) or r is None for r in results)
    assert writer._helper is None
    assert [r.body for p in segments(tmp_path) for r in read_records(p)][-1] == b"after"
    writer.close()


def test_without_a_helper_the_writer_syncs_inline(tmp_path: Path) -> None:
    writer = SpoolWriter(tmp_path, sync_helper=False)
    write(writer, [b"a", b"b", b"c"])
    assert writer.fsyncs >= 1 and writer.records == 3
    writer.close()
    assert [r.body for p in segments(tmp_path) for r in read_records(p)] == [b"a", b"b", b"c"]


def test_the_spool_is_created_private_and_an_unsafe_one_is_refused(tmp_path: Path) -> None:
    writer = SpoolWriter(tmp_path / "new" / "spool", sync_helper=False)
    writer.close()
    assert (tmp_path / "new" / "spool").stat().st_mode & 0o777 == 0o700
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    shared.chmod(0o777)  # anyone may plant a link here
    with pytest.raises(UnsafePathError, match="others may write"):
        SpoolWriter(shared, sync_helper=False)
    with pytest.raises(UnsafePathError, match="others may write"):
        load_events(location(tmp_path / "w"), shared)
    if os.geteuid() == 0:  # only root can hand a folder to someone else here
        theirs = tmp_path / "theirs"
        theirs.mkdir(mode=0o700)
        os.chown(theirs, 4321, -1)
        with pytest.raises(UnsafePathError, match="not by you"):
            SpoolWriter(theirs, sync_helper=False)


def test_links_in_place_of_quarantine_and_archive_are_not_followed(tmp_path: Path) -> None:
    spool, elsewhere = tmp_path / "spool", tmp_path / "elsewhere"
    elsewhere.mkdir()
    writer = SpoolWriter(spool, sync_helper=False)
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
