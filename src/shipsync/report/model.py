"""What a report is made of: sections of charts, each chart one query and one way to draw its rows,
and what became of each chart when the report was built."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from shipsync.report.window import ReportQuery, Window

Rows = list[dict[str, Any]]
Draw = Callable[["Chart", Rows, Window], str]


@dataclass(frozen=True)
class Chart:
    """A title, the unit its numbers are in, its query, and how to draw the rows (to SVG or a table)."""

    key: str
    title: str
    unit: str  # the axis label: what the numbers count, and per what
    query: ReportQuery
    draw: Draw
    empty: str  # what an empty result means, said to a reader


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

    @property
    def drawn(self) -> int:
        return sum(1 for o in self.outcomes if o.state == "drawn")

    def summary_markdown(self) -> str:
        """The flow's markdown artifact: where the file is and what each chart showed."""
        lines = ["# shipsync report", "", f"`{self.path}` from `{self.warehouse}`, built in {self.seconds:.2f} s.", ""]
        if self.first_steps:
            lines += [f"**{self.first_steps}**", ""]
        lines += ["| chart | rows | state |", "|---|---:|---|"]
        for outcome in self.outcomes:
            state = outcome.state if outcome.state == "drawn" else f"{outcome.state}: {outcome.message}"
            lines.append(f"| {outcome.chart.title} | {outcome.rows} | {state.replace('|', '/')} |")
        return "\n".join(lines) + "\n"
