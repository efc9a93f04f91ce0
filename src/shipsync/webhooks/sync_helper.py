"""The spool's sync helper: a child process that makes written spool bytes durable, and the
receiver's end of its pipe protocol. Both halves of the protocol live here, together.

The receiver writes a batch of records to its segment (a fast copy into the page cache) and asks
this process to sync the file, then goes on parsing the next deliveries while the disk works. An
fdatasync on any descriptor of a file flushes every byte written to it before the call, so the
receiver's `write` followed by this process's `fdatasync` is as durable as doing both itself. Done
in the receiver's own event loop, the sync blocked it for ~0.25 ms per batch and cost 40% of its
throughput; done in a thread, the thread then waits for the GIL behind the busy loop. Zeroing the
next extent of a segment is this process's work too: done in the receiver's loop, each 2 MiB of
zeros and their fsync stalled deliveries for ~4 ms.

Protocol, one line per request on the helper's stdin, answered in order on its stdout with `0\\n`
once done, or `<errno>\\n`:
- `s <path>`: fdatasync the file;
- `z <start> <end> <path>`: write zeros over [start, end), then fsync.
The helper exits when stdin closes, so it never outlives its receiver.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import subprocess
import sys
from collections import deque
from collections.abc import Callable

ZERO_CHUNK = 1024 * 1024
Reply = Callable[[OSError | None], None]


def zero_fill(fd: int, start: int, end: int) -> None:
    """Zeros over [start, end) of the file, in writes of at most ZERO_CHUNK (no sync)."""
    zeros = bytes(min(ZERO_CHUNK, end - start))
    offset = start
    while offset < end:
        offset += os.pwrite(fd, memoryview(zeros)[: end - offset], offset)


# The helper's half ---------------------------------------------------------------------------


def serve(requests: int, replies: int) -> None:
    """Answer requests from `requests` on `replies` until `requests` closes."""
    path, fd, pending = b"", -1, b""
    while chunk := os.read(requests, 4096):
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            try:
                kind, _, rest = line.partition(b" ")
                start_text, end_text, target = rest.split(b" ", 2) if kind == b"z" else (b"", b"", rest)
                if kind not in (b"s", b"z"):
                    raise ValueError(kind)
                if target != path:
                    if fd >= 0:
                        os.close(fd)
                        fd = -1
                    fd, path = os.open(target, os.O_RDWR), target
                if kind == b"z":
                    zero_fill(fd, int(start_text), int(end_text))
                    os.fsync(fd)
                else:
                    os.fdatasync(fd)
                reply = b"0\n"
            except OSError as exc:
                if fd >= 0:
                    os.close(fd)
                path, fd = b"", -1
                reply = b"%d\n" % (exc.errno or errno.EIO)
            except ValueError:
                reply = b"%d\n" % errno.EINVAL
            os.write(replies, reply)


# The receiver's half -------------------------------------------------------------------------


class SyncHelper:
    """The receiver's end of the helper process: requests out, answers back in the event loop."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        assert process.stdin is not None and process.stdout is not None
        self._requests = process.stdin.fileno()
        self._replies = process.stdout.fileno()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._on_reply: deque[Reply] = deque()
        self._partial = b""
        self.alive = True

    @classmethod
    def start(cls) -> SyncHelper | None:
        """The helper, or None when it cannot start (the writer then syncs inline)."""
        try:
            process = subprocess.Popen(
                [sys.executable, "-m", "shipsync.webhooks.sync_helper"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, close_fds=True
            )
        except OSError:
            return None
        return cls(process)

    def sync(self, path: bytes, on_reply: Reply) -> bool:
        """Ask for an fdatasync of `path`; False if the helper is gone (the caller syncs itself)."""
        return self._request(b"s " + path, on_reply)

    def zero(self, path: bytes, start: int, end: int, on_reply: Reply) -> bool:
        """Ask for zeros over [start, end) of `path`, then an fsync; False if the helper is gone."""
        return self._request(b"z %d %d " % (start, end) + path, on_reply)

    def watch(self, loop: asyncio.AbstractEventLoop) -> None:
        """Read the helper's answers in `loop` (a writer can outlive an event loop, as in tests)."""
        if loop is self._loop:
            return
        if self._loop is not None and not self._loop.is_closed():
            self._loop.remove_reader(self._replies)
        loop.add_reader(self._replies, self._reply)
        self._loop = loop

    def _request(self, line: bytes, on_reply: Reply) -> bool:
        if not self.alive:
            return False
        self.watch(asyncio.get_running_loop())
        try:
            os.write(self._requests, line + b"\n")
        except OSError:
            self._die()
            return False
        self._on_reply.append(on_reply)
        return True

    def _reply(self) -> None:
        """Answers come in the order of the requests: `0` or an errno, one line each."""
        try:
            chunk = os.read(self._replies, 4096)
        except OSError:
            chunk = b""
        if not chunk:
            self._die()
            waiting, self._on_reply = self._on_reply, deque()
            for on_reply in waiting:
                on_reply(OSError(errno.EIO, "the spool's sync helper exited"))
            return
        *answers, self._partial = (self._partial + chunk).split(b"\n")
        for answer in answers:
            code = int(answer) if answer.isdigit() else errno.EIO
            self._on_reply.popleft()(None if code == 0 else OSError(code, os.strerror(code)))

    def _die(self) -> None:
        self.alive = False
        if self._loop is not None and not self._loop.is_closed():
            self._loop.remove_reader(self._replies)
        self._loop = None

    def stop(self) -> None:
        self._die()
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                pipe.close()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


if __name__ == "__main__":
    with contextlib.suppress(BrokenPipeError, KeyboardInterrupt):
        serve(sys.stdin.fileno(), sys.stdout.fileno())
