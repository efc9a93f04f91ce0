"""Where `shipsync up` keeps its state (`.shipsync/` in the project folder by default, 0700): Prefect's
home with its database and the API's credential (0700, files 0600), the logs, and `up.json`, which
says what runs where. A lock held for as long
as up runs tells a second up, and `shipsync status`, that one is running; the kernel drops it when
up dies however it dies, so an `up.json` without the lock is what a crashed up left behind.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from shipsync.orchestration.environment import made_private
from shipsync.safe_files import PRIVATE_FILE, write_file


@dataclass(frozen=True)
class StateDir:
    root: Path

    @property
    def prefect_home(self) -> Path:
        return self.root / "prefect"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    @property
    def state_file(self) -> Path:
        return self.root / "up.json"

    @property
    def lock_file(self) -> Path:
        return self.root / "up.lock"

    def acquire(self) -> int | None:
        """Take the lock (a file descriptor to keep open while up runs), or None if an up holds it."""
        made_private(self.root)
        fd = os.open(self.lock_file, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, PRIVATE_FILE)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        return fd

    def is_held(self) -> bool:
        if not self.lock_file.exists():
            return False
        fd = self.acquire()
        if fd is None:
            return True
        os.close(fd)
        return False

    def read(self) -> dict[str, Any] | None:
        try:
            state: dict[str, Any] = json.loads(self.state_file.read_text())
        except (OSError, ValueError):
            return None
        return state

    def write(self, state: dict[str, Any]) -> None:
        write_file(self.state_file, json.dumps(state, indent=2).encode())

    def clear(self) -> None:
        self.state_file.unlink(missing_ok=True)


def running_as(pid: int, command: list[str]) -> bool:
    """Whether `pid` is alive and runs `command` (not another process that reused the pid)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[:-1]
    except OSError:
        return False
    return [part.decode(errors="replace") for part in cmdline] == command


def stop_leftovers(state: dict[str, Any], grace_s: float = 5.0) -> list[str]:
    """Stop the processes a crashed up left running (with what they spawned); their names."""
    stopped = []
    for name, child in state.get("children", {}).items():
        pid, command = child.get("pid"), child.get("command")
        if not isinstance(pid, int) or not isinstance(command, list) or not running_as(pid, command):
            continue
        stop_group(pid, partial(running_as, pid, command), grace_s)
        stopped.append(name)
    return stopped


def stop_group(pid: int, still_running: Callable[[], bool], grace_s: float) -> None:
    """SIGTERM to the process group that `pid` leads, SIGKILL once it stops or `grace_s` passes:
    what the group spawned goes with it."""
    _signal_group(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while still_running() and time.monotonic() < deadline:
        time.sleep(0.1)
    _signal_group(pid, signal.SIGKILL)


def _signal_group(pid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signum)
