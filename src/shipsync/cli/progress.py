"""A progress bar on a terminal, nothing otherwise (logs and CI stay clean). A stage of requests
also shows how many are left and how long they take at the configured rate."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, SpinnerColumn, Task, TextColumn, TimeElapsedColumn
from rich.text import Text

from shipsync.bulk.progress import RequestBudget
from shipsync.cli.common import console
from shipsync.plain_text import plain


def duration(seconds: float) -> str:
    """`45 s`, `12 min`, `2 h 05 min`: how long a wait is, as people say it."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    minutes = round(seconds / 60)
    return f"{minutes} min" if minutes < 120 else f"{minutes // 60} h {minutes % 60:02d} min"


def requests_left(budget: RequestBudget, left: int) -> str:
    """`480 requests left, about 4.8 min at 100/60` (or `no rate limit`)."""
    seconds = budget.seconds_for(left)
    at = f"about {duration(seconds)} at {budget.rate}" if seconds is not None and budget.rate else "no rate limit"
    return f"{left:,} request{'s' if left != 1 else ''} left, {at}"


class RequestsLeftColumn(ProgressColumn):
    def __init__(self, budget: RequestBudget) -> None:
        super().__init__()
        self.budget = budget

    def render(self, task: Task) -> Text:
        left = max(0, int((task.total or 0) - task.completed))
        return Text(requests_left(self.budget, left), style="progress.remaining")


@contextmanager
def progress_bar(label: str, total: int | None = None, requests: RequestBudget | None = None) -> Iterator[Callable[[int], None]]:
    if not console.is_terminal:
        yield lambda advance: None
        return
    # The label (it may name the file) is the task's description, shown as plain text: as the
    # column's format it would be read as Rich markup and as a format string (`{...}`).
    description = TextColumn("{task.description}", markup=False)
    columns: list[ProgressColumn] = [SpinnerColumn(), description, BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()]
    if requests is not None and total is not None:
        columns.append(RequestsLeftColumn(requests))
    with Progress(*columns, console=console, transient=True) as bar:
        task_id = bar.add_task(plain(label), total=total)
        yield lambda advance: bar.advance(task_id, advance)
