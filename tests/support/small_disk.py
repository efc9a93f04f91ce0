"""A real full disk for tests: a small tmpfs mounted on a folder of the test's (root only; the test
is skipped where mounting is not allowed), filled with one file until the kernel answers ENOSPC,
and given room again by removing that file."""

from __future__ import annotations

import errno
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

_FILLER = ".filler"
_BLOCK = 4096


class SmallDisk:
    def __init__(self, path: Path) -> None:
        self.path = path

    def fill(self, leave: int = 0) -> None:
        """Write to the disk until it is full, then give back `leave` bytes."""
        fd = os.open(self.path / _FILLER, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            while True:
                try:
                    os.write(fd, b"\0" * _BLOCK)
                except OSError as exc:
                    if exc.errno != errno.ENOSPC:
                        raise
                    break
            if leave:
                os.ftruncate(fd, max(0, os.fstat(fd).st_size - leave))
        finally:
            os.close(fd)

    def free(self) -> None:
        """Room again: the filler goes."""
        (self.path / _FILLER).unlink(missing_ok=True)

    def files(self) -> list[str]:
        """Every file on the disk but the filler, relative to it (folders left out)."""
        return sorted(str(p.relative_to(self.path)) for p in self.path.rglob("*") if p.is_file() and p.name != _FILLER)


@contextmanager
def small_disk(folder: Path, size_kib: int = 512) -> Iterator[SmallDisk]:
    """A tmpfs of `size_kib` KiB on `folder` (made 0700) for the block; unmounted after it."""
    folder.mkdir(mode=0o700, parents=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size_kib}k,mode=0700", "tmpfs", str(folder)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"a small file system cannot be mounted here ({mounted.stderr.strip() or 'mount failed'}): needs root")
    try:
        os.chown(folder, os.geteuid(), os.getegid())
        yield SmallDisk(folder)
    finally:
        subprocess.run(["umount", "--lazy", str(folder)], capture_output=True, check=False)
