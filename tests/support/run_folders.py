"""A test run's temporary folders in memory (tmpfs, /dev/shm): one folder per run, named with the
id of the pytest process that made it, removed when the run ends whether it passed or failed
(unless the user asks to keep it), and the folders of earlier runs whose process is gone swept
at the next start. A folder named without a process id is never swept: its run may still be going."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

MEMORY_DISK = Path("/dev/shm")
PREFIX = "shipsync-pytest-"
# Set to 1 to keep the run's folder in memory after the run (or give --basetemp to keep it on disk).
KEEP_VARIABLE = "SHIPSYNC_KEEP_TEST_FOLDERS"

_RUN_FOLDER = re.compile(rf"{re.escape(PREFIX)}(\d+)-")


def memory_disk_usable(root: Path = MEMORY_DISK) -> bool:
    return root.is_dir() and os.access(root, os.W_OK)


def make_run_folder(root: Path = MEMORY_DISK) -> Path:
    """A private folder under `root` for this process's run, its name carrying the process id."""
    return Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=root))


def keep_requested() -> bool:
    return os.environ.get(KEEP_VARIABLE, "").strip().lower() in ("1", "true", "yes")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return True


def sweep_ended_runs(root: Path = MEMORY_DISK) -> list[Path]:
    """Remove this user's run folders under `root` whose pytest process is gone; the folders removed."""
    removed = []
    for entry in root.iterdir():
        named = _RUN_FOLDER.match(entry.name)
        if named is None or entry.is_symlink() or not entry.is_dir():
            continue
        try:
            owner = entry.stat().st_uid
        except OSError:  # removed since the listing, by its own run
            continue
        if owner != os.getuid() or _alive(int(named[1])):
            continue
        shutil.rmtree(entry, ignore_errors=True)
        removed.append(entry)
    return removed
