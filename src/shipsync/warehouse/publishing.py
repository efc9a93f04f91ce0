"""When to publish: once, when the outermost write of a warehouse in this process ends.

A run (`ledger_run`) and every read-write `connect` enter `publishing(warehouse)`; scopes nest, and
only the outermost one publishes. So a pull of twenty batches publishes once, at its end (on a
connection opened for it), and a command outside any run (`events load`) publishes when its write
ends, on the writer's own connection before it closes: the file is open and locked already. Every
command and flow writes through these two, so none has to remember to publish.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from shipsync.warehouse.layout import analysts_file

if TYPE_CHECKING:
    from shipsync.warehouse.publish import PublishReport

log = logging.getLogger(__name__)
_lock = threading.Lock()
_depth: dict[Path, int] = {}
_pending: set[Path] = set()  # warehouses written since this process last published them
_last: dict[Path, PublishReport] = {}  # each warehouse's last publish in this process


@dataclass(frozen=True)
class Target:
    """Another place a state goes: `folder`, read back by readers at `url` (a prefix) if given."""

    folder: Path
    url: str | None = None


@dataclass(frozen=True)
class PublishOptions:
    account: str | None = None
    targets: tuple[Target, ...] = ()


_options: dict[Path, PublishOptions] = {}


def configure(warehouse: Path, options: PublishOptions) -> None:
    """Where this warehouse publishes besides its analysts' file (set from the settings)."""
    _options[analysts_file(warehouse).absolute()] = options


def options_for(warehouse: Path) -> PublishOptions:
    return _options.get(analysts_file(warehouse).absolute(), PublishOptions())


@dataclass(frozen=True)
class Scope:
    outermost: bool


@contextmanager
def publishing(warehouse: Path) -> Iterator[Scope]:
    """Publish `warehouse` when the outermost of the nested scopes ends, if a write happened that
    was not published yet (also after a failure: the batches it committed are a state the
    pipeline committed)."""
    key = analysts_file(warehouse).absolute()
    with _lock:
        _depth[key] = _depth.get(key, 0) + 1
        outermost = _depth[key] == 1
    try:
        yield Scope(outermost)
    finally:
        with _lock:
            _depth[key] -= 1
            due = _depth[key] == 0 and key in _pending
            if _depth[key] == 0:
                del _depth[key]
                _pending.discard(key)
        if due:
            _publish(key, None, failing=sys.exc_info()[0] is not None)


def wrote(warehouse: Path) -> None:
    """A read-write connection was opened: the scope's end has something to publish."""
    with _lock:
        _pending.add(analysts_file(warehouse).absolute())


def publish_now(warehouse: Path, con: duckdb.DuckDBPyConnection, *, failing: bool) -> bool:
    """Publish on `con`, the writer's connection, before it closes. True when it succeeded."""
    key = analysts_file(warehouse).absolute()
    with _lock:
        _pending.discard(key)
    return _publish(key, con, failing=failing)


def last_report(warehouse: Path) -> PublishReport | None:
    """What the last publish of `warehouse` in this process did (the benchmark reads its time)."""
    return _last.get(analysts_file(warehouse).absolute())


def _publish(warehouse: Path, con: duckdb.DuckDBPyConnection | None, *, failing: bool) -> bool:
    from shipsync.warehouse.publish import publish

    try:
        _last[warehouse] = publish(warehouse, con=con)
    except Exception:
        if not failing:
            raise
        # The run's own error is the one to report; the next run publishes again.
        log.exception("publishing %s after a failed run failed too", warehouse)
        return False
    return True
