"""The sync helper's protocol, both halves: the receiver's `SyncHelper` talking to a real helper
process, answers in order, errors as errnos, and a helper that exits with its pipe."""

from __future__ import annotations

import asyncio
import errno
import os
import threading
from pathlib import Path

from shipsync.webhooks.sync_helper import SyncHelper, serve


def test_requests_round_trip_through_a_real_helper(tmp_path: Path) -> None:
    segment = tmp_path / "segment"
    segment.write_bytes(b"x" * 10_000)
    helper = SyncHelper.start()
    assert helper is not None

    async def exchange() -> list[OSError | None]:
        loop = asyncio.get_running_loop()
        answers: list[asyncio.Future[OSError | None]] = [loop.create_future() for _ in range(4)]

        def settle(n: int):  # type: ignore[no-untyped-def]
            return lambda error: answers[n].set_result(error)

        assert helper.sync(os.fsencode(segment), settle(0))
        assert helper.zero(os.fsencode(segment), 1000, 3000, settle(1))
        assert helper.sync(os.fsencode(tmp_path / "missing"), settle(2))
        assert helper.zero(os.fsencode(segment), 9000, 12_000, settle(3))  # past the end: the file grows
        return list(await asyncio.gather(*answers))

    replies = asyncio.run(exchange())
    assert replies[0] is None and replies[1] is None and replies[3] is None
    assert isinstance(replies[2], OSError) and replies[2].errno == errno.ENOENT
    data = segment.read_bytes()
    assert data[:1000] == b"x" * 1000 and data[1000:3000] == bytes(2000) and data[3000:9000] == b"x" * 6000
    assert data[9000:] == bytes(3000)
    helper.stop()
    assert helper.process.returncode == 0  # it exits when its pipe closes
    assert not helper.sync(os.fsencode(segment), lambda error: None)  # gone: the caller syncs itself


def test_the_helper_half_answers_malformed_requests_with_einval(tmp_path: Path) -> None:
    requests_read, requests_write = os.pipe()
    replies_read, replies_write = os.pipe()
    worker = threading.Thread(target=serve, args=(requests_read, replies_write))
    worker.start()
    target = tmp_path / "f"
    target.write_bytes(b"abc")
    os.write(requests_write, b"q " + os.fsencode(target) + b"\nz 1 x " + os.fsencode(target) + b"\nz 1\n")
    os.write(requests_write, b"s " + os.fsencode(target) + b"\n")
    os.close(requests_write)
    worker.join(timeout=10)
    answers = os.read(replies_read, 100).split()
    assert answers == [b"%d" % errno.EINVAL] * 3 + [b"0"]
    for fd in (requests_read, replies_read, replies_write):
        os.close(fd)
