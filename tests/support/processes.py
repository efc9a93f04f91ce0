"""Stopping a server process the test started while reading what it printed."""

from __future__ import annotations

import subprocess

from shipsync.serving import STOP_GRACE_S


def stop_and_read(process: subprocess.Popen[str], grace_s: float = STOP_GRACE_S) -> tuple[str, str]:
    """`stop_process` for a process whose output is piped: its stdout and stderr, read while it stops
    (waiting without reading could leave it blocked on a full pipe). Never raises for a slow stop."""
    process.terminate()
    try:
        return process.communicate(timeout=grace_s)
    except subprocess.TimeoutExpired:
        process.kill()
        return process.communicate()
