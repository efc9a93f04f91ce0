"""When to publish: once, when the outermost write of a warehouse in this process ends.

A run (`ledger_run`) and every read-write `connect` enter `publishing(warehouse)`; scopes nest, and
only the outermost one publishes, after its connection is closed. So a pull of twenty batches
publishes once, at its end, and a command outside any run (`events load`) publishes when its
write closes. Every command and flow writes through these two, so none has to remember to publish.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from shipsync.warehouse.layout import analysts_file

log = logging.getLogger(__name__)
_lock = threading.Lock()
_depth: dict[Path, int] = {}


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


@contextmanager
def publishing(warehouse: Path) -> Iterator[None]:
    """Publish `warehouse` when the outermost of the nested scopes ends (also after a failure: the
    batches it committed are a state the pipeline committed)."""
    key = analysts_file(warehouse).absolute()
    with _lock:
        _depth[key] = _depth.get(key, 0) + 1
    try:
        yield
    finally:
        with _lock:
            _depth[key] -= 1
            outermost = _depth[key] == 0
            if outermost:
                del _depth[key]
        if outermost:
            _publish(key, failing=sys.exc_info()[0] is not None)


def _publish(warehouse: Path, *, failing: bool) -> None:
    from shipsync.warehouse.publish import publish

    try:
        publish(warehouse)
    except Exception:
        if not failing:
            raise
        # The run's own error is the one to report; the next run publishes again.
        log.exception("publishing %s after a failed run failed too", warehouse)
