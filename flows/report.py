"""The report flow: build the HTML report and leave it as artifacts (a link to the file, a summary)."""

from __future__ import annotations

from pathlib import Path

from prefect import flow

from shipsync.orchestration import artifacts
from shipsync.orchestration.flow_settings import flow_settings
from shipsync.orchestration.task_runner import runs_in_worker_thread
from shipsync.report import build_report
from shipsync.report.tariff import Tariff


@flow(name="report", log_prints=True)
@runs_in_worker_thread
def report(
    output: str | None = None,
    days: int = 30,
    demurrage_per_day: float | None = None,
    detention_per_day: float | None = None,
    currency: str = "USD",
) -> str:
    """Write the report (default: report.html beside the warehouse) and link it from the flow run;
    the daily rates, when given, project demurrage and detention in `currency`."""
    settings = flow_settings()
    target = Path(output) if output else (settings.lake.folder or settings.state_dir) / "report.html"
    tariff = Tariff(demurrage_per_day, detention_per_day, currency.upper())
    result = build_report(settings.lake, target, days=days, spool=settings.spool_dir, tariff=tariff)
    artifacts.report_written(result, days)
    print(f"report written to {result.path}: {result.drawn} of {len(result.outcomes)} charts drawn in {result.seconds:.1f} s")
    return str(result.path)
