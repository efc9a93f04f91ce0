"""The spool's record framing: how one verified delivery is written to a segment and read back.

A record is a header line `<received-at, ns since the epoch> <secret index> <body length> <crc32>`,
then the raw body and a newline: framing, not encoding, so any bytes survive and a delivery costs
no base64 or JSON work on the receiver's hot path. Readers stop at the first header that does not
parse or a record whose checksum fails: a record cut by a crash, which was never acknowledged (or
the zeros that writers before this one wrote ahead of their records).
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

MAX_HEADER = 96  # four decimal numbers and their separators fit with room to spare


def encode_record(body: bytes, secret_index: int, received_at_ns: int | None = None) -> bytes:
    stamp = time.time_ns() if received_at_ns is None else received_at_ns
    return b"%d %d %d %d\n" % (stamp, secret_index, len(body), zlib.crc32(body)) + body + b"\n"


@dataclass
class SpoolRecord:
    segment: str
    end_offset: int  # byte offset just after this record in its segment
    received_at: str
    secret_index: int
    body: bytes


def read_records(path: Path, start: int = 0) -> Iterator[SpoolRecord]:
    """Complete records of one segment from a byte offset, up to the first incomplete one."""
    with path.open("rb") as segment:
        segment.seek(start)
        offset = start
        while header := segment.readline(MAX_HEADER):
            try:
                received_ns, secret_index, length, crc = (int(field) for field in header.split())
            except ValueError:
                return  # a header cut by a crash (or zeros past the last record)
            if length < 0:
                return
            body = segment.read(length + 1)
            if len(body) != length + 1 or body[-1:] != b"\n" or zlib.crc32(body[:-1]) != crc:
                return  # written but never synced and acknowledged: not a delivery
            offset += len(header) + length + 1
            received_at = datetime.fromtimestamp(received_ns / 1e9, UTC).isoformat()
            yield SpoolRecord(path.name, offset, received_at, secret_index, body[:-1])
