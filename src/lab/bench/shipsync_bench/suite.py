"""The list of benchmarks `shipsync bench` runs, with full and quick sizes.

A quick run judges only the rows whose verdict does not depend on size (a rate against its peer,
429s, 503s, writes of an unchanged file); every other row (a limit sized for the full run, a ratio
that fixed costs dominate at small sizes) is printed as context, so a quick run never passes or
fails what the full run would judge otherwise."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from rich.console import Console

from shipsync.errors import InputError
from shipsync_bench import (
    bulk_bench,
    client_bench,
    csv_bench,
    demo_bench,
    lake_bench,
    load_bench,
    prefect_bench,
    prefect_db_bench,
    report_bench,
    request_bounds,
    webhook_abuse,
    webhook_bench,
)
from shipsync_bench.results import BenchResult, as_context


@dataclass(frozen=True)
class Benchmark:
    name: str
    full: Callable[[], list[BenchResult]]
    quick: Callable[[], list[BenchResult]]
    # Starts of the names of the rows a quick run can judge; the others become context there.
    judged_at_quick_sizes: tuple[str, ...] = ()

    def run_quick(self) -> list[BenchResult]:
        return at_quick_sizes(self.quick(), self.judged_at_quick_sizes)


def at_quick_sizes(results: list[BenchResult], judged: tuple[str, ...]) -> list[BenchResult]:
    """The rows of a quick run, those it cannot judge at its sizes marked as context."""
    return [r if r.name.startswith(judged) else as_context(r, "at quick sizes") for r in results]


BENCHMARKS: list[Benchmark] = [
    Benchmark(
        "client",
        lambda: client_bench.fetch_rate(3000),
        lambda: client_bench.fetch_rate(600, rounds=2),
        judged_at_quick_sizes=("client fetch rate",),
    ),
    Benchmark(
        "budget",
        lambda: client_bench.rate_budget(),
        lambda: client_bench.rate_budget(windows=2),
        judged_at_quick_sizes=("rate budget use", "429s received"),
    ),
    Benchmark(
        "load",
        lambda: load_bench.normalize_and_upsert(100_000, rss_check_documents=10_000),
        lambda: load_bench.normalize_and_upsert(2_000),
    ),
    Benchmark(
        "lake",
        lambda: lake_bench.lake_figures(10_000, 200_000) + lake_bench.year_of_loads(365),
        lambda: lake_bench.lake_figures(1_000, 20_000, rounds=1) + lake_bench.year_of_loads(90, loads_per_day=1),
    ),
    Benchmark("prefect", lambda: prefect_bench.prefect_overhead(10_000), lambda: prefect_bench.prefect_overhead(2_000, rounds=1)),
    Benchmark(
        "prefect-db",
        lambda: prefect_db_bench.prefect_databases(8, 60),
        lambda: prefect_db_bench.prefect_databases(4, 20),
        judged_at_quick_sizes=("Prefect API 503s on PostgreSQL",),
    ),
    Benchmark(
        "webhooks",
        lambda: (
            webhook_bench.burst(10_000)
            + webhook_bench.spool_alone(10_000)
            + webhook_bench.spool_lines()
            + webhook_abuse.slow_bodies(1_000, deliveries=200, seconds=20)
            + webhook_bench.receiver_throughput(10_000)
            + webhook_bench.events_load_rate(100_000)
        ),
        lambda: (
            webhook_bench.burst(2_000, rounds=1)
            + webhook_bench.spool_alone(2_000)
            + webhook_bench.spool_lines()
            + webhook_abuse.slow_bodies(1_000, deliveries=50, seconds=5)
            + webhook_bench.receiver_throughput(2_000, rounds=2)
            + webhook_bench.events_load_rate(20_000)
        ),
        # The events load rate is not judged: the warehouse's creation weighs more in 20,000 events.
        judged_at_quick_sizes=(
            "burst: acknowledgements per second",
            "burst: acknowledged",
            "spool alone",
            "spool lines",
            "under 1,000 trickling connections: deliveries acknowledged",
        ),
    ),
    Benchmark(
        "bulk",
        lambda: bulk_bench.validation(100_000) + csv_bench.intake(100_000, 20_000) + bulk_bench.rerun_writes(10_000),
        lambda: bulk_bench.validation(20_000) + csv_bench.intake(20_000, 5_000) + bulk_bench.rerun_writes(500),
        judged_at_quick_sizes=("write requests re-running",),
    ),
    # The demo has no smaller size: a quick run prints its figures as context.
    Benchmark("demo", demo_bench.demo_time, demo_bench.demo_time),
    Benchmark("report", lambda: report_bench.report_build(100_000, 300_000), lambda: report_bench.report_build(10_000, 30_000, rounds=2)),
    Benchmark(
        "bounds",
        lambda: request_bounds.request_bounds(quick=False),
        lambda: request_bounds.request_bounds(quick=True),
        # Requests per unit of work do not depend on the sizes (measured: 1.50 at a twentieth, 1.49 at a fifth).
        judged_at_quick_sizes=("quick size: ",),
    ),
]


def run_suite(*, quick: bool, only: list[str] | None = None, console: Console | None = None) -> list[BenchResult]:
    unknown = sorted(set(only or []) - {bench.name for bench in BENCHMARKS})
    if unknown:
        raise InputError(f"unknown benchmark(s) {', '.join(unknown)}; choose from {', '.join(b.name for b in BENCHMARKS)}")
    results: list[BenchResult] = []
    for bench in BENCHMARKS:
        if only and bench.name not in only:
            continue
        if console:
            console.print(f"running {bench.name} ...")
        started = time.perf_counter()
        results.extend(bench.run_quick() if quick else bench.full())
        if console:
            console.print(f"  {bench.name} took {time.perf_counter() - started:.0f} s")
    return results
