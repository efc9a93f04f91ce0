"""What a report is made of: sections of charts, each chart one query and one way to draw its rows,
and what became of each chart when the report was built."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from shipsync.report.window import ClockName, ReportQuery, Window, minute

Rows = list[dict[str, Any]]
Windows = dict[ClockName, Window]  # the window of each of the report's clocks
Draw = Callable[["Chart", Rows, Window], str]


@dataclass(frozen=True)
class Chart:
    """A title, the unit its numbers are in, its query, and how to draw the rows (to SVG or a table)."""

    key: str
    title: str
    unit: str  # the axis label: what the numbers count, and per what
    query: ReportQuery
    draw: Draw
    empty: str  # what an empty result means, said to a reader; `{window}` becomes "in the 30 days to ..."


@dataclass(frozen=True)
class Section:
    key: str
    heading: str
    intro: str
    charts: Sequence[Chart]


@dataclass
class ChartOutcome:
    """A chart as built: drawn (with its rows), or why not, in one line that names what to run."""

    chart: Chart
    sql: str
    state: Literal["drawn", "empty", "missing"]
    html: str = ""
    message: str = ""
    rows: int = 0


@dataclass
class ReportResult:
    path: Path
    warehouse: str  # where the warehouse is, as `LakeLocation.describe` says it
    seconds: float
    outcomes: list[ChartOutcome] = field(default_factory=list)
    first_steps: str = ""  # set when the warehouse has nothing to show at all
    windows: Windows = field(default_factory=dict)

    @property
    def drawn(self) -> int:
        return sum(1 for o in self.outcomes if o.state == "drawn")

    def as_of_lines(self) -> list[str]:
        """Which as-of each clock took, and why: `fleet as of 2026-07-23 14:05 UTC (now)`."""
        return [f"{name} as of {minute(window.as_of)} ({window.why})" for name, window in self.windows.items()]

    def summary_markdown(self) -> str:
        """The flow's markdown artifact: where the file is and what each chart showed."""
        lines = ["# shipsync report", "", f"`{self.path}` from `{self.warehouse}`, built in {self.seconds:.2f} s.", ""]
        if self.windows:
            lines += [*(f"- {line}" for line in self.as_of_lines()), ""]
        if self.first_steps:
            lines += [f"**{self.first_steps}**", ""]
        lines += ["| chart | rows | state |", "|---|---:|---|"]
        for outcome in self.outcomes:
            state = outcome.state if outcome.state == "drawn" else f"{outcome.state}: {outcome.message}"
            lines.append(f"| {outcome.chart.title} | {outcome.rows} | {state.replace('|', '/')} |")
        return "\n".join(lines) + "\n"
