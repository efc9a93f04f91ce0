"""`shipsync bench --quick`: the rows its small sizes cannot judge are context, the others keep their verdict."""

from __future__ import annotations

import io

from rich.console import Console

from shipsync_bench.results import as_context, at_least, print_table, under
from shipsync_bench.suite import BENCHMARKS, Benchmark, at_quick_sizes


def test_a_quick_run_keeps_the_verdicts_it_can_judge_and_makes_the_rest_context() -> None:
    rate = at_least("client fetch rate (typed documents)", 500.0, "docs/s", "bare httpx loop", 1000.0, 0.8)
    sized = under("report build (10,000 documents)", 1.2, "s", 3.0)
    marked = at_quick_sizes([rate, sized], ("client fetch rate",))
    assert marked[0] == rate and not marked[0].passed and marked[0].judged
    assert not marked[1].judged and marked[1].goal == "(context at quick sizes; full run: < 3 s)"
    assert marked[1].figure == sized.figure and marked[1].ratio == sized.ratio


def test_a_failing_row_made_context_is_printed_as_context_not_as_a_verdict() -> None:
    failing = under("peak RSS (2,000 documents)", 900.0, "MB", 600)
    context = as_context(failing, "at quick sizes")
    assert as_context(context, "again") == context
    out = io.StringIO()
    print_table([failing, context], Console(file=out, width=300))
    lines = [line for line in out.getvalue().splitlines() if "peak RSS" in line]
    assert "FAIL" in lines[0] and "context" in lines[1] and "FAIL" not in lines[1] and "pass" not in lines[1]


def test_the_full_run_judges_every_row_the_quick_run_would_not() -> None:
    bench = Benchmark("x", lambda: [under("a", 1.0, "s", 3.0)], lambda: [under("a", 1.0, "s", 3.0)])
    assert bench.full()[0].judged and not bench.run_quick()[0].judged
    assert all(isinstance(b.judged_at_quick_sizes, tuple) for b in BENCHMARKS)
    assert {b.name for b in BENCHMARKS if b.judged_at_quick_sizes} == {"client", "budget", "prefect-db", "webhooks", "bulk", "bounds"}
