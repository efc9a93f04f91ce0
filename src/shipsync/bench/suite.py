"""The list of benchmarks `shipsync bench` runs, with full and quick sizes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rich.console import Console

from shipsync.bench import client_bench
from shipsync.bench.results import BenchResult


@dataclass(frozen=True)
class Benchmark:
    name: str
    full: Callable[[], list[BenchResult]]
    quick: Callable[[], list[BenchResult]]


BENCHMARKS: list[Benchmark] = [
    Benchmark("client", lambda: client_bench.fetch_rate(3000), lambda: client_bench.fetch_rate(600, rounds=2)),
    Benchmark("budget", lambda: client_bench.rate_budget(), lambda: client_bench.rate_budget(windows=2)),
]


def run_suite(*, quick: bool, only: list[str] | None = None, console: Console | None = None) -> list[BenchResult]:
    results: list[BenchResult] = []
    for bench in BENCHMARKS:
        if only and bench.name not in only:
            continue
        if console:
            console.print(f"running {bench.name} ...")
        results.extend(bench.quick() if quick else bench.full())
    return results
