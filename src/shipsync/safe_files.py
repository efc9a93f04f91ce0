"""Files and folders nobody else can redirect: private folders whose owner and mode are checked,
sub-folders opened without following links, and files created exclusively, then renamed in place.

A link planted where shipsync writes would send its bytes (a webhook secret, a delivery, a results
file) wherever the link points; a folder others can write to lets them plant one. So shipsync
creates its folders private (0700), refuses folders that are not its own or that others may write
to, never follows a link below them, and creates every file with O_EXCL|O_NOFOLLOW (an existing
name, link or not, fails the create instead of being opened).

Every file shipsync writes whole goes through `replacing` (or `write_bytes`, `replacing_text`):
a new temp file in the same folder, named `.NAME.<random>.tmp` and created exclusively (a name
nobody can guess in advance, and a link planted there fails the create), written, fsync'd, then
renamed over the target: a symlink planted at the target is replaced, its target never opened or
overwritten. Both steps name the folder by a descriptor opened once, so a folder swapped half-way
cannot redirect the second step. A reader sees the old file or the new one, never a half-written
one; on any error the temp file is removed. What it writes is private (0600) unless a caller asks
for another mode: the report and results files hold the fleet's data, shared by choice. Logs are
appended through `open_log`, which refuses a link at their name. Folders shipsync creates are
0700, parents included (`make_folders`).
"""

from __future__ import annotations

import contextlib
import io
import os
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import BinaryIO, TextIO

from shipsync.errors import ConfigError

PRIVATE_FOLDER = 0o700
PRIVATE_FILE = 0o600
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


class UnsafePathError(ConfigError):
    """A folder or file others could use to redirect what shipsync writes."""


def check_own_folder(path: Path) -> None:
    """A folder must be a directory owned by this user that nobody else may write to."""
    try:
        info = os.stat(path)
    except OSError as exc:
        raise UnsafePathError(f"{path}: cannot use this folder ({exc.strerror})") from None
    if not stat.S_ISDIR(info.st_mode):
        raise UnsafePathError(f"{path}: not a folder")
    if info.st_uid != os.geteuid():
        raise UnsafePathError(f"{path}: owned by user id {info.st_uid}, not by you; shipsync writes only to folders of its own")
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise UnsafePathError(
            f"{path}: others may write to this folder (mode {stat.S_IMODE(info.st_mode):04o}); "
            "shipsync will not write there (chmod go-w it, or choose another folder)"
        )


def make_folders(path: Path) -> Path:
    """Create `path` and whichever of its parents are missing, each 0700 (`mkdir -p` would give
    the parents the umask's mode, 0755 as a rule); folders that exist are left as they are."""
    missing = []
    for folder in (path, *path.parents):
        if folder.exists():
            break
        missing.append(folder)
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):  # made meanwhile by another process
            folder.mkdir(mode=PRIVATE_FOLDER)
    return path


def private_folder(path: Path) -> Path:
    """Create `path` and its missing parents (0700) unless it exists, then check it is ours."""
    make_folders(path)
    check_own_folder(path)
    return path


def open_subfolder(parent: int, name: str) -> int:
    """A descriptor of the sub-folder `name` of the folder `parent` (a descriptor), created 0700
    if missing; a link in its place is refused, never followed."""
    with contextlib.suppress(FileExistsError):
        os.mkdir(name, PRIVATE_FOLDER, dir_fd=parent)
    try:
        fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), dir_fd=parent)
    except OSError as exc:
        raise UnsafePathError(f"{name}: not a folder of its own (a link or a file?): {exc.strerror}") from None
    info = os.fstat(fd)
    if info.st_uid != os.geteuid() or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        os.close(fd)
        raise UnsafePathError(f"{name}: owned by someone else or writable by others")
    return fd


def create_exclusive(name: str | Path, *, folder: int | None = None, mode: int = PRIVATE_FILE) -> int:
    """A new file, open for writing: fails if anything (a link included) already has the name."""
    return os.open(name, _CREATE, mode, dir_fd=folder)


def open_log(path: Path) -> BinaryIO:
    """`path` open for appending (a log), created 0600 in a folder created 0700 if missing; a link
    at its name is refused (ELOOP), never followed."""
    make_folders(path.parent)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), PRIVATE_FILE)
    except OSError as exc:
        raise UnsafePathError(f"{path}: cannot open this log ({exc.strerror}; a link in its place is never followed)") from None
    return os.fdopen(fd, "ab")


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def sync_folder(path: Path | int) -> None:
    """Make a folder's entries (a new or renamed file) durable."""
    fd = os.open(path, os.O_RDONLY) if not isinstance(path, int) else os.dup(path)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextmanager
def replacing(target: Path, *, mode: int = PRIVATE_FILE, durable: bool = True) -> Iterator[BinaryIO]:
    """A binary file that becomes `target` when the block ends without error.

    `mode` is filtered by the umask like any new file: private (0600) unless the caller says
    otherwise, so a report or results file is its owner's to share. `durable` fsyncs the
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
def replacing_text(target: Path, *, encoding: str = "utf-8", newline: str | None = None, mode: int = PRIVATE_FILE) -> Iterator[TextIO]:
    """`replacing` for text: what `open(target, "w", encoding=..., newline=...)` would give."""
    with replacing(target, mode=mode) as raw:
        text = io.TextIOWrapper(raw, encoding=encoding, newline=newline)
        try:
            yield text
            text.flush()
        finally:
            text.detach()  # `replacing` closes the file itself


def write_bytes(target: Path, data: bytes, *, mode: int = PRIVATE_FILE) -> None:
    """Write `data` as `target`, safely (see the module docstring)."""
    with replacing(target, mode=mode) as out:
        out.write(data)


def write_file(path: Path, data: bytes, mode: int = PRIVATE_FILE) -> None:
    """Replace `path` with `data` durably, private to its owner unless `mode` says otherwise."""
    write_bytes(path, data, mode=mode)
