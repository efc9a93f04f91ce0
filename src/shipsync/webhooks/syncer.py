"""The spool's fsync helper: a small child process that makes written spool bytes durable.

The receiver writes a batch of records to its segment (a fast copy into the page cache) and asks
this process to fsync the file, then goes on parsing the next deliveries while the disk works.
An fdatasync on any descriptor of a file flushes every byte written to it before the call, so
the receiver's `write` followed by this process's `fdatasync` is as durable as doing both itself. Done in
the receiver's own event loop, the fsync blocked it for ~0.25 ms per batch and cost 40% of its
throughput; done in a thread, the thread then waits for the GIL behind the busy loop.

Zeroing the next extent of a segment is this process's work too: done in the receiver's loop,
each 2 MiB of zeros and their fsync stalled deliveries for ~4 ms.

Protocol, one line per request on stdin, answered in order on stdout with `0\n` once done, or
`<errno>\n`: `s <path>` fdatasyncs the file; `z <start> <end> <path>` writes zeros over
[start, end) and fsyncs. The receiver never writes records into a range it asked to be zeroed
until the answer comes. The helper exits when stdin closes, so it never outlives its receiver.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys

ZERO_CHUNK = 1024 * 1024


def serve(requests: int, replies: int) -> None:
    path = b""
    fd = -1
    pending = b""
    while True:
        chunk = os.read(requests, 4096)
        if not chunk:
            return
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            try:
                kind, _, rest = line.partition(b" ")
                if kind == b"z":
                    start_text, end_text, target = rest.split(b" ", 2)
                else:
                    target = rest
                if target != path:
                    if fd >= 0:
                        os.close(fd)
                        fd = -1
                    fd = os.open(target, os.O_RDWR)
                    path = target
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
                reply = b"%d\n" % (exc.errno or 5)
            except ValueError:
                reply = b"%d\n" % errno.EINVAL
            os.write(replies, reply)


def zero_fill(fd: int, start: int, end: int) -> None:
    """Zeros over [start, end) of the file, in writes of at most ZERO_CHUNK (no sync)."""
    zeros = bytes(min(ZERO_CHUNK, end - start))
    offset = start
    while offset < end:
        offset += os.pwrite(fd, memoryview(zeros)[: end - offset], offset)


if __name__ == "__main__":
    with contextlib.suppress(BrokenPipeError, KeyboardInterrupt):
        serve(sys.stdin.fileno(), sys.stdout.fileno())
