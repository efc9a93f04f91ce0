"""A process `shipsync up` keeps running: started in its own process group (so what it spawns, such
as a worker's flow runs, stops with it), told by the kernel to stop if up itself dies, its output
in a log file, and stopped within a grace period when asked.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from shipsync.safe_files import open_log
from shipsync.serving import stop_process

_PR_SET_PDEATHSIG = 1


def _prepare(parent: int, umask: int | None) -> None:
    """In the child, before exec: the files it creates masked by `umask`; `_die_with(parent)`."""
    if umask is not None:
        os.umask(umask)
    _die_with(parent)


def _die_with(parent: int) -> None:
    """In the child, before exec: SIGTERM when the parent dies, even by kill -9 (Linux)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        return  # not Linux: a crashed up leaves its children, which the next up stops
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)


@dataclass
class Child:
    """One supervised process: what to run, where its output goes, and how to say where it is."""

    name: str
    command: list[str]
    env: dict[str, str]
    cwd: Path
    log: Path
    where: str = ""
    umask: int | None = None  # None: the parent's; 0o077: every file it creates is its own alone
    # What must hold before each start; a ShipsyncError from it (a setting that cannot work) keeps
    # the child stopped, with the reason in `stopped_because`, instead of starting it to fail.
    check: Callable[[], None] | None = field(default=None, repr=False)
    stopped_because: str | None = None
    process: subprocess.Popen[bytes] | None = None
    started_at: float = 0.0
    restarts: int = 0
    retry_at: float = field(default=0.0)

    def start(self) -> None:
        with open_log(self.log) as out:
            self.process = subprocess.Popen(
                self.command,
                env=self.env,
                cwd=self.cwd,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=partial(_prepare, os.getpid(), self.umask),
            )
        self.started_at = time.monotonic()

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    def exit_status(self) -> int | None:
        """None while it runs (or was never started); its exit status once it has ended."""
        return None if self.process is None else self.process.poll()

    def stop(self, grace_s: float) -> bool:
        """SIGTERM to its group, SIGKILL after `grace_s`; True if it stopped within the grace."""
        if self.process is None:
            return True
        stopped = stop_process(self.process, grace_s, group=True)
        self.process = None
        return stopped

    def record(self) -> dict[str, object]:
        """What up.json keeps of it: enough to find it again, and to tell it from a reused pid."""
        return {
            "pid": self.pid,
            "command": self.command,
            "where": self.where,
            "log": str(self.log),
            "stopped_because": self.stopped_because,
        }
