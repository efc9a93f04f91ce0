"""Keeping `shipsync up`'s processes running: a child that exits on its own is started again (after
1, 2, 4 ... up to `MAX_BACKOFF_S` seconds), unless what it needs cannot work as configured (its `check` says why: it
stays stopped until its inputs change); the receiver starts once a webhook secret exists and
restarts when its inputs change; checks run at their intervals meanwhile; and everything stops
within `STOP_WITHIN_S` when asked: the worker and the receiver first (a worker's flow runs report
their end to the server meanwhile), the server last.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from shipsync.errors import ShipsyncError
from shipsync.orchestration.children import Child

STOP_WITHIN_S = 9.0
SERVER_GRACE_S = 3.0
MAX_BACKOFF_S = 30.0
HEALTHY_AFTER_S = 60.0  # a child that ran this long before exiting starts again at once


@dataclass
class Periodic:
    every_s: float
    do: Callable[[], None]
    due_at: float


class Supervisor:
    """The children of one `up`, in start order; `watch` until `stop_requested`, then `stop_all`."""

    def __init__(self, say: Callable[[str], None], on_start: Callable[[], None] = lambda: None) -> None:
        self.say = say
        self.on_start = on_start  # after any child starts or is kept stopped: up.json records it
        self.children: dict[str, Child] = {}
        self.stop_requested = threading.Event()
        self._receiver_inputs: Callable[[], object] | None = None
        self._inputs_seen: object = None
        self._periodic: list[Periodic] = []

    def add(self, child: Child, *, start: bool = True) -> Child:
        self.children[child.name] = child
        if start:
            self._start(child)
        return child

    def every(self, seconds: float, do: Callable[[], None]) -> None:
        """Call `do` every `seconds` while watching (the first time after `seconds`)."""
        self._periodic.append(Periodic(seconds, do, time.monotonic() + seconds))

    def _start(self, child: Child) -> None:
        child.retry_at = 0.0
        if child.check is not None:
            try:
                child.check()
            except ShipsyncError as exc:
                child.stopped_because = str(exc)
                self.say(f"{child.name} not started: {exc} (it starts again when its settings change)")
                self.on_start()
                return
        child.stopped_because = None
        child.start()
        self.on_start()

    def receiver_follows(self, inputs_version: Callable[[], object]) -> None:
        """Start the receiver when `inputs_version()` is truthy; restart it when it changes."""
        self._receiver_inputs = inputs_version
        self._inputs_seen = inputs_version()

    def watch(self, tick_s: float = 0.5) -> None:
        while not self.stop_requested.wait(tick_s):
            now = time.monotonic()
            for child in self.children.values():
                status = child.exit_status()
                if status is not None:
                    self._restart_later(child, status, now)
                elif child.process is None and child.retry_at and now >= child.retry_at:
                    self._start(child)
            self._follow_receiver_inputs()
            for periodic in self._periodic:
                if now >= periodic.due_at:
                    periodic.do()
                    periodic.due_at = time.monotonic() + periodic.every_s

    def _restart_later(self, child: Child, status: int, now: float) -> None:
        ran_for = now - child.started_at
        child.restarts = 0 if ran_for > HEALTHY_AFTER_S else child.restarts + 1
        delay = min(MAX_BACKOFF_S, 2.0 ** (child.restarts - 1)) if child.restarts else 0.0
        self.say(f"{child.name} exited with status {status} after {ran_for:.0f} s; starting it again in {delay:.0f} s (log: {child.log})")
        child.process = None
        child.retry_at = now + delay if delay else now + 0.01

    def _follow_receiver_inputs(self) -> None:
        receiver = self.children.get("receiver")
        if receiver is None or self._receiver_inputs is None:
            return
        version = self._receiver_inputs()
        if version == self._inputs_seen:
            return
        self._inputs_seen = version
        if not version:
            return
        if receiver.exit_status() is None and receiver.process is not None:
            self.say("the receiver's webhook secrets or spool changed: restarting the receiver")
            receiver.stop(STOP_WITHIN_S - 1)
        else:
            self.say(f"a webhook secret is stored: starting the receiver at {receiver.where}")
        self._start(receiver)

    def stop_all(self, before_server: Callable[[], None] = lambda: None) -> dict[str, bool]:
        """Stop every child, calling `before_server` once all but the server have stopped; for each
        child, whether it stopped on its own (False: it was killed)."""
        first = [c for name, c in self.children.items() if name != "server"]
        outcome = _stop_together(first, STOP_WITHIN_S - SERVER_GRACE_S)
        if "server" in self.children:
            if self.children["server"].exit_status() is None:
                before_server()
            outcome |= _stop_together([self.children["server"]], SERVER_GRACE_S)
        return outcome


def _stop_together(children: list[Child], grace_s: float) -> dict[str, bool]:
    outcome: dict[str, bool] = {}

    def stop(child: Child) -> None:
        outcome[child.name] = child.stop(grace_s)

    threads = [threading.Thread(target=stop, args=(child,), name=f"stop-{child.name}") for child in children]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcome
