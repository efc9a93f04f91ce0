"""A progress bar on a terminal, nothing otherwise (logs and CI stay clean)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from shipsync.cli.common import console


@contextmanager
def progress_bar(label: str, total: int | None = None) -> Iterator[Callable[[int], None]]:
    if not console.is_terminal:
        yield lambda advance: None
        return
    columns = [SpinnerColumn(), TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()]
    with Progress(*columns, console=console, transient=True) as bar:
        task_id = bar.add_task(label, total=total)
        yield lambda advance: bar.advance(task_id, advance)
