"""Write a file where others may plant links: never follow one, never leave half a file.

The content goes to a new temp file in the same folder, created with O_CREAT|O_EXCL|O_NOFOLLOW
(so neither an existing file nor a link at that name is opened), then renamed over the target.
A rename replaces the target's directory entry: a symlink planted at the target is replaced, its
target never opened or overwritten. Both steps name the folder by a descriptor opened once, so a
folder swapped half-way cannot redirect the second step. A reader sees the old file or the new
one, never a half-written one; on any error the temp file is removed.
"""

from __future__ import annotations

import io
import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import BinaryIO, TextIO

_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


@contextmanager
def replacing(target: Path, *, mode: int = 0o666, durable: bool = True) -> Iterator[BinaryIO]:
    """A binary file that becomes `target` when the block ends without error.

    `mode` is filtered by the umask like any new file (0o600 for secrets). `durable` fsyncs the
    file and its folder before and after the rename, so a crash leaves the old file or the new.
    """
    folder = os.open(target.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    temp = f".{target.name}.{secrets.token_hex(6)}.tmp"
    try:
        descriptor = os.open(temp, _CREATE, mode, dir_fd=folder)
        try:
            with os.fdopen(descriptor, "wb") as out:
                yield out
                out.flush()
                if durable:
                    os.fsync(out.fileno())
            os.replace(temp, target.name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            with suppress(FileNotFoundError):
                os.unlink(temp, dir_fd=folder)
            raise
        if durable:
            os.fsync(folder)
    finally:
        os.close(folder)


@contextmanager
def replacing_text(target: Path, *, encoding: str = "utf-8", newline: str | None = None, mode: int = 0o666) -> Iterator[TextIO]:
    """`replacing` for text: what `open(target, "w", encoding=..., newline=...)` would give."""
    with replacing(target, mode=mode) as raw:
        text = io.TextIOWrapper(raw, encoding=encoding, newline=newline)
        try:
            yield text
            text.flush()
        finally:
            text.detach()  # `replacing` closes the file itself


def write_bytes(target: Path, data: bytes, *, mode: int = 0o666) -> None:
    """Write `data` as `target`, safely (see the module docstring)."""
    with replacing(target, mode=mode) as out:
        out.write(data)
