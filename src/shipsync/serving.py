"""Waiting for a server process to answer, and stopping a process (or its process group) promptly:
what `shipsync up` does with the servers and workers it starts."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from typing import Any

import httpx


def wait_until_answers(url: str, process: subprocess.Popen[bytes], timeout_s: float = 60) -> None:
    """Poll `url` until it answers 200; RuntimeError if the process exits or time runs out."""
    deadline = time.monotonic() + timeout_s
    # One client for every poll: a new one per poll builds an SSL context, which at 20 polls a
    # second takes a core from the very server being waited for.
    with httpx.Client(timeout=1) as client:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"server for {url} exited with status {process.returncode}")
            try:
                if client.get(url).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
    process.kill()
    raise RuntimeError(f"server for {url} did not start within {timeout_s:.0f} s")


STOP_GRACE_S = 8.0


def stop_process(process: subprocess.Popen[Any], grace_s: float = STOP_GRACE_S, *, group: bool = False) -> bool:
    """Ask a process to stop (SIGTERM), and kill it if it has not within `grace_s`; True if it stopped
    on its own. With `group`, the whole process group it leads (started with start_new_session)
    gets the signals, so children it spawned (a worker's flow runs) stop with it. Never raises for
    a slow stop: whatever happens, the process is gone when this returns.
    """
    if process.poll() is not None:
        return True
    _signal(process, signal.SIGTERM, group)
    try:
        process.wait(timeout=grace_s)
        stopped = True
    except subprocess.TimeoutExpired:
        stopped = False
    if group or not stopped:
        # Children of a group leader that exited may still be running: they go too.
        _signal(process, signal.SIGKILL, group)
    process.wait()
    return stopped


def _signal(process: subprocess.Popen[Any], signum: int, group: bool) -> None:
    try:
        if group:
            os.killpg(process.pid, signum)
        else:
            process.send_signal(signum)
    except (ProcessLookupError, PermissionError):
        pass
