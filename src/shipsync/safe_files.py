"""Files and folders nobody else can redirect: private folders whose owner and mode are checked,
sub-folders opened without following links, and files created exclusively, then renamed in place.

A link planted where shipsync writes would send its bytes (a webhook secret, a delivery) wherever
the link points; a folder others can write to lets them plant one. So shipsync creates its folders
private (0700), refuses folders that are not its own or that others may write to, never follows a
link below them, and creates every file with O_EXCL|O_NOFOLLOW (an existing name, link or not,
fails the create instead of being opened).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

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


def private_folder(path: Path) -> Path:
    """Create `path` (0700, parents as the umask says) unless it exists, then check it is ours."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):  # made meanwhile: checked below like any other
            path.mkdir(mode=PRIVATE_FOLDER)
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


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def write_file(path: Path, data: bytes, mode: int = PRIVATE_FILE) -> None:
    """Replace `path` with `data` durably: a new temporary file created exclusively beside it,
    synced, then renamed over it (a link at `path` is replaced, its target left alone)."""
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    fd = create_exclusive(temporary, mode=mode)
    try:
        write_all(fd, data)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        temporary.unlink(missing_ok=True)
        raise
    os.close(fd)
    os.replace(temporary, path)
    sync_folder(path.parent)


def sync_folder(path: Path | int) -> None:
    """Make a folder's entries (a new or renamed file) durable."""
    fd = os.open(path, os.O_RDONLY) if not isinstance(path, int) else os.dup(path)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
