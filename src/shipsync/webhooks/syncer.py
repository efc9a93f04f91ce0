"""The spool's fsync helper: a small child process that makes written spool bytes durable.

The receiver writes a batch of records to its segment (a fast copy into the page cache) and asks
this process to fsync the file, then goes on parsing the next deliveries while the disk works.
An fdatasync on any descriptor of a file flushes every byte written to it before the call, so
the receiver's `write` followed by this process's `fdatasync` is as durable as doing both itself. Done in
the receiver's own event loop, the fsync blocked it for ~0.25 ms per batch and cost 40% of its
throughput; done in a thread, the thread then waits for the GIL behind the busy loop.

Protocol, one request in flight at a time: the receiver writes the segment's path and a newline
to stdin; the helper answers `0\n` once it is synced, or `<errno>\n`. It exits when stdin closes,
so it never outlives its receiver.
"""

from __future__ import annotations

import contextlib
import os
import sys


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
                if line != path:
                    if fd >= 0:
                        os.close(fd)
                        fd = -1
                    fd = os.open(line, os.O_RDONLY)
                    path = line
                os.fdatasync(fd)
                reply = b"0\n"
            except OSError as exc:
                if fd >= 0:
                    os.close(fd)
                path, fd = b"", -1
                reply = b"%d\n" % (exc.errno or 5)
            os.write(replies, reply)


if __name__ == "__main__":
    with contextlib.suppress(BrokenPipeError, KeyboardInterrupt):
        serve(sys.stdin.fileno(), sys.stdout.fileno())
