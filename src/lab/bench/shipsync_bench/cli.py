"""`shipsync bench`: every benchmark beside its peer or limit, in one run; a table and JSON.

Installed as the `bench` command of `shipsync` (entry point `shipsync.commands`)."""

from __future__ import annotations

from pathlib import Path

import typer

from shipsync.cli.common import console, one_line_errors


@one_line_errors
def bench(
    quick: bool = typer.Option(False, "--quick", help="Smaller sizes: about a minute."),
    output: Path | None = typer.Option(None, "--output", help="Also write the results as JSON to this file."),
    only: list[str] = typer.Option([], "--only", help="Run only these benchmarks (repeatable)."),
) -> None:
    """Measure throughput, latency and overhead against peers and limits on this machine."""
    from shipsync_bench.results import print_table, write_json
    from shipsync_bench.suite import run_suite

    results = run_suite(quick=quick, only=only or None, console=console)
    print_table(results, console)
    if output:
        write_json(results, output)
        console.print(f"results written to {output}")
