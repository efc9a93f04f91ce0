"""The suite itself on a busy machine: no hypothesis deadline anywhere, and no temporary folder left
in memory (/dev/shm) by a run, passed or failed, or by an earlier run whose process is gone."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, is_hypothesis_test, settings
from hypothesis import strategies as st

from support.run_folders import MEMORY_DISK, PREFIX, make_run_folder, memory_disk_usable, sweep_ended_runs

TESTS = Path(__file__).parent


def test_the_suite_profile_is_in_force() -> None:
    assert settings.default.deadline is None
    assert HealthCheck.too_slow in settings.default.suppress_health_check


def test_no_property_test_of_the_run_has_a_deadline(request: pytest.FixtureRequest) -> None:
    """Every collected hypothesis test, with the settings it gave itself over the profile."""
    checked = []
    for item in request.session.items:
        function = getattr(item, "obj", None)
        if function is None or not is_hypothesis_test(function):
            continue
        own = getattr(function, "_hypothesis_internal_use_settings", settings.default)
        assert own.deadline is None, f"{item.nodeid} has a deadline of {own.deadline}"
        assert HealthCheck.too_slow in own.suppress_health_check, f"{item.nodeid} brings back the too-slow health check"
        checked.append(item.nodeid)
    assert checked  # this test itself, at least


@given(st.booleans())
def test_an_example_slower_than_hypothesis_default_deadline_passes(flag: bool) -> None:
    time.sleep(0.3)  # hypothesis's own default deadline is 200 ms


def _ended_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_the_sweep_removes_only_folders_of_runs_whose_process_is_gone(tmp_path: Path) -> None:
    ended = tmp_path / f"{PREFIX}{_ended_pid()}-abc"
    running = make_run_folder(tmp_path)  # this process's: alive
    unnamed = tmp_path / f"{PREFIX}x1y2z3"  # no process id: its run may still be going
    other = tmp_path / "someone-elses-12345-folder"
    for folder in (ended, unnamed, other):
        folder.mkdir()
    (ended / "lake.duckdb").write_bytes(b"x" * 1024)

    assert sweep_ended_runs(tmp_path) == [ended]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in (running, unnamed, other))
    assert running.name.startswith(f"{PREFIX}{os.getpid()}-")


FAILING = """
def test_that_fails(tmp_path):
    (tmp_path / "left.txt").write_text("a failed test's file")
    assert False
"""


@pytest.mark.slow  # a pytest run of its own, importing shipsync and Prefect: seconds
@pytest.mark.skipif(not memory_disk_usable(), reason="no writable /dev/shm here")
def test_a_failed_run_leaves_nothing_in_memory(tmp_path: Path) -> None:
    (tmp_path / "test_fails.py").write_text(FAILING)
    command = [sys.executable, "-m", "pytest", "-p", "conftest", "-p", "no:cacheprovider", "-p", "no:xdist", "-q", "test_fails.py"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])}
    env.pop("SHIPSYNC_KEEP_TEST_FOLDERS", None)
    run = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out, _ = run.communicate(timeout=600)  # a hang guard: the run takes seconds
    assert run.returncode == 1, out
    said = [line for line in out.splitlines() if line.startswith("temporary folders were in ")]
    assert len(said) == 1, out
    folder = Path(said[0].removeprefix("temporary folders were in ").split(",")[0])
    assert folder.parent == MEMORY_DISK and folder.name.startswith(f"{PREFIX}{run.pid}-"), said
    assert not folder.exists(), "the failed run left its folder"
    assert not list(MEMORY_DISK.glob(f"{PREFIX}{run.pid}-*"))
