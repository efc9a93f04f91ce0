"""Benchmark results: one row per figure with its peer, ratio, goal and verdict; table and JSON."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from shipsync.safe_files import write_bytes

CONTEXT = "(context"


@dataclass(frozen=True)
class BenchResult:
    name: str
    figure: float
    unit: str
    peer: str
    peer_figure: float | None
    ratio: float | None
    goal: str
    passed: bool

    @property
    def judged(self) -> bool:
        """False for a context row: a figure printed beside the others without a verdict."""
        return not self.goal.startswith(CONTEXT)

    def as_json(self) -> dict[str, object]:
        row = asdict(self)
        row["pass"] = row.pop("passed")
        return row


def _versus(name: str, figure: float, unit: str, peer: str, peer_figure: float, bound: float, higher_is_better: bool) -> BenchResult:
    ratio = figure / peer_figure if peer_figure else None
    met = ratio is not None and (ratio >= bound if higher_is_better else ratio <= bound)
    goal = f"{'>=' if higher_is_better else '<='} {bound:g}x {peer}"
    return BenchResult(name, figure, unit, peer, peer_figure, ratio, goal, met)


def at_least(name: str, figure: float, unit: str, peer: str, peer_figure: float, min_ratio: float) -> BenchResult:
    """A figure that should reach `min_ratio` times its peer (higher is better)."""
    return _versus(name, figure, unit, peer, peer_figure, min_ratio, higher_is_better=True)


def at_most(name: str, figure: float, unit: str, peer: str, peer_figure: float, max_ratio: float) -> BenchResult:
    """A figure that should stay within `max_ratio` times its peer (lower is better)."""
    return _versus(name, figure, unit, peer, peer_figure, max_ratio, higher_is_better=False)


def under(name: str, figure: float, unit: str, limit: float) -> BenchResult:
    """A figure that must stay below an absolute limit."""
    return BenchResult(name, figure, unit, "limit", limit, figure / limit if limit else None, f"< {limit:g} {unit}", figure < limit)


def as_context(result: BenchResult, why: str) -> BenchResult:
    """The row without a verdict, its goal kept in the text: e.g. a limit sized for the full run,
    which a quick run's small sizes would pass (or fail) whatever the full run says."""
    if not result.judged:
        return result
    return replace(result, goal=f"{CONTEXT} {why}; full run: {result.goal})", passed=True)


def print_table(results: list[BenchResult], console: Console | None = None) -> None:
    table = Table(title="shipsync bench")
    for column in ("benchmark", "figure", "peer or limit", "ratio", "goal", "pass"):
        table.add_column(column)
    for r in results:
        peer = f"{r.peer}: {r.peer_figure:,.3g}" if r.peer_figure is not None else r.peer
        table.add_row(
            r.name,
            f"{r.figure:,.4g} {r.unit}",
            peer,
            f"{r.ratio:.2f}" if r.ratio is not None else "-",
            r.goal,
            "context" if not r.judged else Text("pass", style="green") if r.passed else Text("FAIL", style="red"),
        )
    (console or Console()).print(table)


def write_json(results: list[BenchResult], path: Path) -> None:
    write_bytes(path, (json.dumps([r.as_json() for r in results], indent=2) + "\n").encode())
