"""The spool: append-only segment files of verified deliveries, made durable by group commit.

Each record is one line of JSON: received-at, the index of the secret that signed it, and the raw
body (base64, so any bytes survive). `append` returns only after the record is fsynced; records
that arrive while an fsync runs are written and synced together by the next one, so throughput is
not one fsync per request and no request waits on a timer. A line cut by a crash was never
acknowledged; readers skip an incomplete last line.
"""

from __future__ import annotations

import asyncio
import base64
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import orjson

SEGMENT_BYTES = 64 * 1024 * 1024
SEGMENT_GLOB = "segment-*.jsonl"


def encode_record(body: bytes, secret_index: int, received_at: datetime | None = None) -> bytes:
    record = {
        "received_at": (received_at or datetime.now(UTC)).isoformat(),
        "secret_index": secret_index,
        "body": base64.b64encode(body).decode(),
    }
    return orjson.dumps(record) + b"\n"


@dataclass
class SpoolRecord:
    segment: str
    end_offset: int  # byte offset just after this record in its segment
    received_at: str
    secret_index: int
    body: bytes


def read_records(path: Path, start: int = 0) -> Iterator[SpoolRecord]:
    """Complete records of one segment from a byte offset; stops before a torn last line."""
    with path.open("rb") as segment:
        segment.seek(start)
        offset = start
        for line in segment:
            if not line.endswith(b"\n"):
                return  # written but never synced and acknowledged: not a delivery
            offset += len(line)
            try:
                record = orjson.loads(line)
                body = base64.b64decode(record["body"])
            except (ValueError, KeyError, TypeError):
                continue  # cannot happen for lines we wrote whole; never stop the log for one
            yield SpoolRecord(path.name, offset, record.get("received_at", ""), int(record.get("secret_index", -1)), body)


def segments(spool: Path) -> list[Path]:
    return sorted(spool.glob(SEGMENT_GLOB))


class SpoolWriter:
    """One writer per receiver process, appending to its own segments."""

    def __init__(self, spool: Path) -> None:
        self.spool = spool
        spool.mkdir(parents=True, exist_ok=True)
        (spool / "quarantine").mkdir(exist_ok=True)
        self._pending: list[tuple[bytes, asyncio.Future[None]]] = []
        self._flushing = False
        self._fd = -1
        self._size = 0
        self._open_segment()
        self.fsyncs = 0
        self.records = 0

    def _open_segment(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
        # Names sort by time; the pid keeps two receivers on one spool apart.
        name = f"segment-{time.time_ns():020d}-{os.getpid()}.jsonl"
        self._fd = os.open(self.spool / name, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        self._size = 0
        _fsync_dir(self.spool)

    async def append(self, record: bytes) -> None:
        """Return once `record` is on disk."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending.append((record, future))
        if not self._flushing:
            self._flushing = True
            asyncio.get_running_loop().create_task(self._flush())
        await future

    async def _flush(self) -> None:
        try:
            await asyncio.sleep(0)  # let requests that arrived together join this batch
            while self._pending:
                batch, self._pending = self._pending, []
                try:
                    # Inline, not in a thread: an fsync here takes ~0.3 ms, while handing it to an
                    # executor thread cost ~5 ms per batch (the thread waits for the GIL behind the
                    # busy event loop, up to Python's switch interval). Requests arriving meanwhile
                    # wait in the kernel and form the next batch.
                    self._write_and_sync(b"".join(record for record, _ in batch))
                except OSError as exc:
                    for _, future in batch:
                        if not future.done():
                            future.set_exception(exc)
                    continue
                self.fsyncs += 1
                self.records += len(batch)
                for _, future in batch:
                    if not future.done():
                        future.set_result(None)
                await asyncio.sleep(0)
        finally:
            self._flushing = False

    def _write_and_sync(self, data: bytes) -> None:
        if self._size + len(data) > SEGMENT_BYTES and self._size:
            self._open_segment()
        view = memoryview(data)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]
        self._size += len(data)
        os.fsync(self._fd)

    def quarantine(self, body: bytes, reason: str) -> Path:
        """Keep a signed body that is not a notification: nothing is lost."""
        path = self.spool / "quarantine" / f"{time.time_ns():020d}-{os.getpid()}.bin"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, body)
            os.fsync(fd)
        finally:
            os.close(fd)
        path.with_suffix(".reason").write_text(reason + "\n")
        return path

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
