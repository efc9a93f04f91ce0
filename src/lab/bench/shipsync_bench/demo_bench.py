"""`shipsync demo` as a user runs it: seconds to its first step's result and to its end, in a process
of its own, twice (the first run creates Prefect's database; the second finds it, as a user's second
demo does).

The peer is a constant: the demo took 16 s on this machine (idle) before its steps became Prefect
flows; that demo no longer exists to be run beside this one. The goal (issue 29 item 5) is a first
result within 10 s and an end within 30 s, 30/16 of the peer. The load average during the run is
printed beside the figures: on a busy machine they grow with it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from shipsync_bench.results import BenchResult, as_context, at_most, under

FLOWLESS_DEMO_S = 16.0  # the demo before its steps became flows (issue 29), idle machine
FIRST_RESULT_LIMIT_S = 10.0
WHOLE_DEMO_LIMIT_S = 30.0


def timed_demo(workdir: Path, project: Path) -> tuple[float, float]:
    """Seconds from starting `shipsync demo` to its first step's line (`✓ ...`) and to its end."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "SHIPSYNC_"))}
    env["PREFECT_SERVER_ANALYTICS_ENABLED"] = "false"
    started = time.monotonic()
    first: float | None = None
    command = [sys.executable, "-m", "shipsync", "demo", "--workdir", str(workdir)]
    with subprocess.Popen(command, cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as demo:
        assert demo.stdout is not None and demo.stderr is not None
        for line in demo.stdout:
            if first is None and line.startswith("✓"):
                first = time.monotonic() - started
        errors = demo.stderr.read()
    ended = time.monotonic() - started
    if demo.returncode != 0 or first is None:
        raise RuntimeError(f"shipsync demo failed ({demo.returncode}): {errors.strip()[-500:]}")
    return first, ended


def demo_time(project: Path = Path(".")) -> list[BenchResult]:
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="shipsync-bench-demo-") as tmp:
        cold_first, cold_end = timed_demo(Path(tmp) / "demo", project)
        first, end = timed_demo(Path(tmp) / "demo", project)
    load_after = os.getloadavg()[0]
    bound = WHOLE_DEMO_LIMIT_S / FLOWLESS_DEMO_S
    return [
        under("demo: first result (second run)", first, "s", FIRST_RESULT_LIMIT_S),
        at_most(
            "demo: whole run (second run)",
            end,
            "s",
            "the demo before its steps became flows (idle)",
            FLOWLESS_DEMO_S,
            bound,
        ),
        as_context(under("demo: first result (first run, new Prefect database)", cold_first, "s", FIRST_RESULT_LIMIT_S), "first run"),
        as_context(at_most("demo: whole run (first run)", cold_end, "s", "the demo before flows", FLOWLESS_DEMO_S, bound), "first run"),
        BenchResult("demo: load average before, after", load_before, "", "after", load_after, None, "(context: machine load)", True),
    ]
