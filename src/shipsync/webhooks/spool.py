"""The spool folder: its sizes, its segments and their locks, quarantine and archive.

Layout: `segment-<ns>-<pid>.spool` files of framed records (see `framing`), one writer each;
`spool-id`, the spool's own id (`SpoolFolder.spool_id`);
`quarantine/` keeps signed bodies that are not notifications (`.bin`, with a `.reason`);
`archive/` receives segments once loaded, kept for a while (`ArchiveRetention`). A writer holds an
exclusive `flock` on its segment; a segment nobody holds is finished (its receiver closed it or
died).

The folder is created private (0700), and only it: its parent must exist (by default the
warehouse's folder, which the warehouse creates, 0700), so a receiver started first never makes a
parent with the umask's mode. An existing one must be owned by this user and writable by nobody else, and its sub-folders
are made 0700 and opened without following links: otherwise anyone who can write there could
plant a link and have deliveries written, or segments moved, where it points.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path

from shipsync.errors import ConfigError
from shipsync.safe_files import PRIVATE_FOLDER, check_own_folder, create_exclusive, open_subfolder, replacing, sync_folder, write_all

SEGMENT_GLOB = "segment-*.spool"
SPOOL_ID_FILE = "spool-id"


@dataclass(frozen=True)
class SpoolSizes:
    """Every size of the spool, writer and loader, in one place."""

    segment_bytes: int = 64 * 1024 * 1024  # a segment is closed and a new one opened past this
    load_records: int = 20_000  # `events load` commits a batch at this many records...
    load_bytes: int = 4 * 1024 * 1024  # ... or at this many bytes of bodies, whichever comes first


@dataclass(frozen=True)
class ArchiveRetention:
    """How long loaded segments stay in `archive/`, and how much of them: past either, the oldest go."""

    days: float = 30.0
    megabytes: float = 2048.0


@dataclass(frozen=True)
class Archived:
    name: str
    size: int
    modified: float  # seconds since the epoch: when its last record was written


def segments(spool: Path) -> list[Path]:
    return sorted(spool.glob(SEGMENT_GLOB))


def is_finished(path: Path) -> bool:
    """True when no writer holds the segment: its receiver closed it or died."""
    with path.open("rb") as segment:
        try:
            fcntl.flock(segment, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        fcntl.flock(segment, fcntl.LOCK_UN)
        return True


class SpoolFolder:
    """An open, checked spool folder: new segments, quarantined bodies and archived segments are
    all made relative to descriptors of the folders, so no link below the spool is followed."""

    def __init__(self, path: Path) -> None:
        if not path.parent.is_dir():
            raise ConfigError(
                f"{path}: its folder {path.parent} does not exist, and the receiver creates the spool only (the warehouse's "
                "folder is made by the first sync or `webhooks register`); create it with mkdir -m 700, or set SHIPSYNC_SPOOL"
            )
        with contextlib.suppress(FileExistsError):
            path.mkdir(mode=PRIVATE_FOLDER)
        check_own_folder(path)
        self.path = path
        self.fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)

    def new_segment(self) -> tuple[int, Path]:
        """A new segment, open for reading and writing and locked by this process."""
        # Names sort by time; the pid keeps two receivers on one spool apart.
        name = f"segment-{time.time_ns():020d}-{os.getpid()}.spool"
        fd = os.open(name, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=self.fd)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            sync_folder(self.fd)
        except OSError:
            os.close(fd)
            self.remove_segment(name)
            raise
        return fd, self.path / name

    def remove_segment(self, name: str) -> None:
        """Remove a segment of this writer's that holds no record (best effort: a reader passes over
        an empty segment anyway)."""
        with contextlib.suppress(OSError):
            os.unlink(name, dir_fd=self.fd)

    @contextlib.contextmanager
    def _subfolder(self, name: str) -> Iterator[int]:
        """A descriptor of `quarantine/` or `archive/`, made 0700 if missing, never through a link."""
        folder = open_subfolder(self.fd, name)
        try:
            yield folder
        finally:
            os.close(folder)

    def quarantine(self, body: bytes, reason: str) -> str:
        """Keep a signed body that is not a notification, with its reason; the name it got."""
        name = f"{time.time_ns():020d}-{os.getpid()}"
        with self._subfolder("quarantine") as folder:
            written: list[str] = []
            try:
                for suffix, data in ((".bin", body), (".reason", reason.encode() + b"\n")):
                    fd = create_exclusive(name + suffix, folder=folder)
                    written.append(name + suffix)
                    try:
                        write_all(fd, data)
                        os.fsync(fd)
                    finally:
                        os.close(fd)
                sync_folder(folder)
            except OSError:
                for file in written:  # a full disk: nothing half-kept (the 503 makes the service retry)
                    with contextlib.suppress(OSError):
                        os.unlink(file, dir_fd=folder)
                raise
        return name + ".bin"

    def spool_id(self) -> str:
        """The spool's own id, made once and kept in `spool-id`: what tells its segments from another
        host's spool in the lake's checkpoints. Made under a lock on the folder (two loaders at
        once agree on one id) and written whole before it takes its name, so a full disk leaves
        no empty id behind (an empty one, left by an older loader, is made again)."""
        path = self.path / SPOOL_ID_FILE
        with contextlib.suppress(FileNotFoundError):
            if own := path.read_text().strip():
                return own
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        try:
            with contextlib.suppress(FileNotFoundError):
                if own := path.read_text().strip():
                    return own  # another loader made it meanwhile
            made = uuid.uuid4().hex[:12]
            with replacing(path) as out:
                out.write(made.encode() + b"\n")
            return made
        finally:
            fcntl.flock(self.fd, fcntl.LOCK_UN)

    def archive(self, names: list[str]) -> None:
        """Move segments into `archive/` (renames within the spool's file system)."""
        if not names:
            return
        with self._subfolder("archive") as folder:
            for name in names:
                os.rename(name, name, src_dir_fd=self.fd, dst_dir_fd=folder)
            sync_folder(folder)
            sync_folder(self.fd)

    def archived(self) -> list[Archived]:
        """The segments in `archive/`, oldest first."""
        with self._subfolder("archive") as folder:
            found = [
                Archived(entry.name, info.st_size, info.st_mtime)
                for entry in os.scandir(folder)
                if fnmatch(entry.name, SEGMENT_GLOB) and stat.S_ISREG((info := entry.stat(follow_symlinks=False)).st_mode)
            ]
        return sorted(found, key=lambda segment: (segment.modified, segment.name))

    def remove_archived(self, names: list[str]) -> None:
        if not names:
            return
        with self._subfolder("archive") as folder:
            for name in names:
                os.unlink(name, dir_fd=folder)
            sync_folder(folder)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
