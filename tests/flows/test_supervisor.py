"""`shipsync up`'s supervisor with real child processes: a child whose settings cannot work is kept
stopped with one line saying why (and started once its inputs change), a child that fails on its
own is started again with growing pauses, and up's receiver check fails on a spool whose folder
does not exist."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from shipsync.config import load_settings
from shipsync.errors import ConfigError
from shipsync.orchestration.children import Child
from shipsync.orchestration.supervisor import Supervisor
from shipsync.orchestration.up import _receiver_can_start

SLEEPER = [sys.executable, "-c", "import time; time.sleep(600)"]
FAILING = [sys.executable, "-c", "raise SystemExit(3)"]


class Watched:
    """A supervisor watching in a thread, with what it said."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.supervisor = Supervisor(self.lines.append)
        self._thread = threading.Thread(target=self.supervisor.watch, kwargs={"tick_s": 0.05}, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def wait_until(self, condition: Callable[[], bool], what: str, timeout_s: float = 120) -> None:
        deadline = time.monotonic() + timeout_s
        while not condition():
            assert time.monotonic() < deadline, f"timed out waiting for {what}; said: {self.lines}"
            time.sleep(0.05)

    def stop(self) -> None:
        self.supervisor.stop_requested.set()
        self._thread.join()
        self.supervisor.stop_all()


@pytest.fixture
def watched() -> Iterator[Watched]:
    running = Watched()
    yield running
    running.stop()


def child(name: str, command: list[str], tmp_path: Path) -> Child:
    return Child(name, command, {}, tmp_path, tmp_path / f"{name}.log")


def test_a_child_whose_settings_cannot_work_is_kept_stopped_until_they_change(watched: Watched, tmp_path: Path) -> None:
    fixed = threading.Event()
    checks: list[float] = []

    def check() -> None:
        checks.append(time.monotonic())
        if not fixed.is_set():
            raise ConfigError("/srv/spool: its folder /srv does not exist")

    receiver = child("receiver", SLEEPER, tmp_path)
    receiver.check = check
    inputs = ["secrets-1"]
    watched.supervisor.add(receiver)
    watched.supervisor.receiver_follows(lambda: inputs[0])
    watched.start()

    assert receiver.process is None and receiver.stopped_because == "/srv/spool: its folder /srv does not exist"
    assert watched.lines == ["receiver not started: /srv/spool: its folder /srv does not exist (it starts again when its settings change)"]
    assert receiver.record()["stopped_because"] == receiver.stopped_because  # up.json, which status reads
    # The watch goes round and nothing restarts it: the same settings would fail the same way.
    rounds: list[None] = []
    watched.supervisor.every(0.01, lambda: rounds.append(None))
    watched.wait_until(lambda: len(rounds) >= 20, "twenty rounds of the watch")
    assert len(checks) == 1 and receiver.process is None and len(watched.lines) == 1

    fixed.set()
    inputs[0] = "secrets-2"  # the inputs it follows change: it is tried again, and starts
    watched.wait_until(lambda: receiver.process is not None, "the receiver to start")
    assert receiver.stopped_because is None and receiver.exit_status() is None


def test_a_child_that_fails_on_its_own_is_started_again_after_growing_pauses(watched: Watched, tmp_path: Path) -> None:
    failing = watched.supervisor.add(child("worker", FAILING, tmp_path))
    watched.start()
    watched.wait_until(lambda: sum("exited with status 3" in said for said in watched.lines) >= 3, "three restarts")
    pauses = [said.split("starting it again in ")[1] for said in watched.lines if "exited with status 3" in said]
    assert pauses[:3] == [
        "1 s (log: " + str(failing.log) + ")",
        "2 s (log: " + str(failing.log) + ")",
        "4 s (log: " + str(failing.log) + ")",
    ]


def test_the_receiver_check_names_a_spool_whose_folder_does_not_exist(tmp_path: Path, secrets_file: Path) -> None:
    settings = load_settings(
        api_url="http://127.0.0.1:9/v2", api_key="a-test-key", warehouse=tmp_path / "warehouse", webhook_secrets="a-secret-of-enough-length"
    )
    with pytest.raises(ConfigError, match=f"its folder {tmp_path / 'warehouse'} does not exist"):
        _receiver_can_start(settings)
    (tmp_path / "warehouse").mkdir(mode=0o700)
    _receiver_can_start(settings)  # and once it exists, nothing is left open or running
    assert (tmp_path / "warehouse" / "spool").is_dir()
