"""How bulk code reports progress without knowing who shows it, and never from inside a hot loop.

A `Stage` is what `shipsync.cli.progress.progress_bar` is: given a label and a total (None when
unknown) it opens a stage and hands back `advance(n)`. A stage whose items are requests to the
service says so with a `RequestBudget` (the configured rate), so whoever shows it can say how many
requests are left and how long they take at that rate. Library code takes a Stage as a parameter
(`no_progress` by default) and reports in chunks: the reader every 10,000 rows it shapes, the
plan's rows every 10,000 rows it takes (`reporting_rows`), the writer each write it finishes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Protocol

from shipsync.api.ratelimit import RateLimit
from shipsync.bulk.cells import Cell

if TYPE_CHECKING:  # the reader brings pandas: the command line's progress bars need none of it
    from shipsync.bulk.reader import Sheet

Advance = Callable[[int], None]
REPORT_EVERY = 10_000


@dataclasses.dataclass(frozen=True)
class RequestBudget:
    """The items of a stage are requests, spent at `rate` (None: no limit is configured)."""

    rate: RateLimit | None

    def seconds_for(self, requests: int) -> float | None:
        """What `requests` take at the configured rate; None without a limit."""
        return requests * self.rate.seconds / self.rate.requests if self.rate else None


class Stage(Protocol):
    def __call__(self, label: str, total: int | None, requests: RequestBudget | None = None) -> AbstractContextManager[Advance]: ...


@contextmanager
def no_progress(label: str, total: int | None = None, requests: RequestBudget | None = None) -> Iterator[Advance]:
    yield lambda advance: None


class _ReportingRows(list[list[Cell]]):
    """The rows of a Sheet that report every REPORT_EVERY rows taken by whoever iterates them."""

    advance: Advance

    def __iter__(self) -> Iterator[list[Cell]]:
        taken = 0
        for row in super().__iter__():
            yield row
            taken += 1
            if taken == REPORT_EVERY:
                self.advance(taken)
                taken = 0
        self.advance(taken)


def reporting_rows(sheet: Sheet, advance: Advance) -> Sheet:
    """The same sheet (rows shared, not copied) whose rows report their progress to `advance` as a
    kind plans them: kinds stay free of progress code."""
    rows = _ReportingRows()
    rows.advance = advance
    rows.extend(sheet.rows)
    return dataclasses.replace(sheet, rows=rows)
