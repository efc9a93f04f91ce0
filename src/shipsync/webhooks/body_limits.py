"""What a delivery's body may be, checked before and right after it is parsed: how large it is,
how deep it nests and how many values it holds (counted over the raw bytes, before any parser sees
them), and no member given twice in one object. The receiver refuses a body beyond them (413 past
its size, 400 and kept in quarantine past the rest) and `events load` dead-letters one (an older
receiver's, or one planted in the spool) for the same reason, so every body either side accepts
can be parsed, stored and written again. A notification `events catch-up` takes from the
service's listing is held to the same limits (`catch_up`): what a delivery could not bring, the
listing does not bring either.

Why these three: orjson reads 1,024 levels but writes 254, so a body nested deeper than it writes
would parse, then fail every step that writes its JSON again, the dead-letter step included, and
stop the loader for good. A megabyte of `{}` parses into many times its size in objects. A member
given twice is read
two ways: orjson (and so the event log's columns) keeps the last, DuckDB reading the stored
payload the first, so one body would say two things in the warehouse.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import accumulate
from typing import Any

# Bytes of one body: the receiver's default cap (`limits.ReceiverLimits.max_body`) and a listed
# notification's. A notification is a few kilobytes.
MAX_BODY_BYTES = 1024 * 1024
# orjson writes at most 254 levels; the loader writes parts of a body, or a body inside a few
# levels of its own, so what it accepts stays well below that. A notification nests about 6.
MAX_DEPTH = 240
# Values (objects, arrays and scalars, counted off the bytes): a notification holds hundreds;
# this bounds the objects a parsed body makes, whatever its bytes are.
MAX_VALUES = 100_000

_STEP = [0] * 256  # +1 for an opening bracket, -1 for a closing one
for opening, closing in (b"[]", b"{}"):
    _STEP[opening], _STEP[closing] = 1, -1
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_WHITESPACE = b" \t\r\n"


@dataclass(frozen=True, slots=True)
class Shape:
    """A body's structure, read off its bytes with its strings set aside."""

    depth: int  # the most brackets open at once
    values: int  # every value, the body's own included, if the body is JSON
    members: int  # the members of every object, if the body is JSON

    def problem(self) -> str | None:
        """Why a body of this shape is refused, or None."""
        if self.depth > MAX_DEPTH:
            return f"nested {self.depth:,} levels deep (at most {MAX_DEPTH})"
        if self.values > MAX_VALUES:
            return f"holding {self.values:,} values (at most {MAX_VALUES:,})"
        return None


def shape_of(body: bytes) -> Shape:
    """The shape of `body` without parsing it, in a few passes of C (bytes methods), so that a
    hostile body costs no more than a plain one. Each value but the body's own follows a comma or
    opens a container's list of members or items, hence the count. A body that is not JSON gets a
    shape too; the parser refuses it afterwards."""
    bare = _outside_strings(body).translate(None, _WHITESPACE)
    filled = bare.count(b"[") + bare.count(b"{") - bare.count(b"[]") - bare.count(b"{}")
    values = 1 + bare.count(b",") + filled
    if values > MAX_VALUES:
        return Shape(0, values, bare.count(b":"))  # refused for its values: its depth is not counted
    depth = max(accumulate(map(_STEP.__getitem__, bare.translate(None, _NOT_BRACKETS))), default=0)
    return Shape(depth, values, bare.count(b":"))


def _outside_strings(body: bytes) -> bytes:
    """`body` with each string replaced by `0`. Escaped backslashes go first, then escaped quotes
    (a run of backslashes pairs up from the left, as JSON reads it); every quote left opens or
    closes a string, so the pieces between quotes alternate outside, inside."""
    unescaped = body.replace(b"\\\\", b"").replace(b'\\"', b"")
    return b"0".join(unescaped.split(b'"')[::2])


def members_of(document: Any) -> int:
    """How many members the objects of a parsed document hold, all told."""
    count, stack = 0, [document]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            count += len(value)
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return count
