"""How a pull runs its batch steps: directly, or (in a flow) each wrapped as a Prefect task.

Pull functions call `runner(name, fn, *args)` for each fetch and each load, so a flow gets one
task per batch (not per id) and the plain function stays testable without Prefect.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar

T = TypeVar("T")


class StepRunner(Protocol):
    def __call__(self, name: str, fn: Callable[..., T], /, *args: Any) -> T: ...


def run_direct(name: str, fn: Callable[..., T], /, *args: Any) -> T:
    return fn(*args)


Progress = Callable[[int], None]


def no_progress(advance: int) -> None:
    return None
