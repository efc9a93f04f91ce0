"""The spool writer: appends framed records to a segment of its own, each on disk before it is
acknowledged.

`append` returns a future that completes once its record is synced. The disk work (a write and an
`fdatasync`) runs in one thread of the writer's, so the event loop keeps reading requests while
the disk works; the records that arrive meanwhile are written and synced together by the next
turn (group commit). No request waits on a timer, and a burst costs one sync per turn, not one
per delivery. A batch whose write or sync fails is answered with the error (503: the service
retries) and its segment is closed, cut back to its last synced record, so no record ever
follows a torn one; a segment that holds no record then is removed, so a full disk leaves no
empty segment behind however many deliveries it refuses. The next batch opens a new segment, and
once the disk has room again deliveries are stored as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from shipsync.webhooks.spool import SpoolFolder, SpoolSizes

Waiting = list[tuple[bytes, asyncio.Future[None]]]


class SpoolWriter:
    """One writer per receiver process. Only its thread touches the open segment."""

    def __init__(self, spool: Path, *, sizes: SpoolSizes | None = None) -> None:
        self.folder = SpoolFolder(spool)
        self.spool = self.folder.path
        self.sizes = sizes or SpoolSizes()
        self._disk = ThreadPoolExecutor(max_workers=1, thread_name_prefix="spool-writer")
        self._pending: Waiting = []
        self._flushing: asyncio.Task[None] | None = None
        self._fd = -1
        self._segment: str | None = None  # the open segment's name
        self._size = 0  # bytes synced in the open segment
        self.fsyncs = 0
        self.records = 0

    def append(self, record: bytes) -> asyncio.Future[None]:
        """A future that completes once `record` is on disk (or fails with the OSError)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        self._pending.append((record, future))
        if self._flushing is None:
            self._flushing = loop.create_task(self._flush())
        return future

    async def _flush(self) -> None:
        """Write and sync what is pending, again and again until nothing is."""
        loop = asyncio.get_running_loop()
        try:
            while self._pending:
                batch, self._pending = self._pending, []
                try:
                    await loop.run_in_executor(self._disk, self._write, b"".join(record for record, _ in batch))
                except OSError as error:
                    _settle(batch, error)
                else:
                    self.fsyncs += 1
                    self.records += len(batch)
                    _settle(batch, None)
        finally:
            self._flushing = None

    def _write(self, data: bytes) -> None:
        """In the writer's thread: append `data` to the segment (a new one past its size) and sync."""
        if self._fd < 0 or (self._size and self._size + len(data) > self.sizes.segment_bytes):
            self._close_segment()
            self._fd, path = self.folder.new_segment()
            self._segment, self._size = path.name, 0
        try:
            view, offset = memoryview(data), self._size
            while view:
                written = os.pwrite(self._fd, view, offset)
                view, offset = view[written:], offset + written
            os.fdatasync(self._fd)
        except OSError:
            self._close_segment()
            raise
        self._size += len(data)

    def _close_segment(self) -> None:
        """Close the segment, cut to its last synced record (a failed write may have left part of
        one); a segment with no record is removed (a failed first write: nothing to keep)."""
        if self._fd < 0:
            return
        with contextlib.suppress(OSError):  # best effort: a reader stops at a torn record anyway
            os.ftruncate(self._fd, self._size)
            os.fsync(self._fd)
        os.close(self._fd)
        self._fd = -1
        if self._size == 0 and self._segment is not None:
            self.folder.remove_segment(self._segment)
        self._segment = None

    def quarantine(self, body: bytes, reason: str) -> str:
        """Keep a signed body that is not a notification: nothing is lost."""
        return self.folder.quarantine(body, reason)

    def close(self) -> None:
        """Wait for the disk work under way, then close the segment (which releases its lock)."""
        self._disk.shutdown(wait=True)
        self._close_segment()
        self.folder.close()


def _settle(batch: Waiting, error: OSError | None) -> None:
    for _, future in batch:
        if future.done():
            continue  # its request was cancelled (the client went away)
        if error is None:
            future.set_result(None)
        else:
            future.set_exception(error)
