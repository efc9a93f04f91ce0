"""The report flow: build the HTML report and leave it as artifacts (a link to the file, a summary).

Async flow whose body runs in a worker thread (see `shipsync.flowkit.runs_in_worker_thread`).
"""

from __future__ import annotations

from pathlib import Path

from prefect import flow
from prefect.artifacts import create_link_artifact, create_markdown_artifact

from shipsync.flowkit import flow_settings, runs_in_worker_thread
from shipsync.report import build_report


@flow(name="report", log_prints=True)
@runs_in_worker_thread
def report(output: str | None = None, days: int = 30) -> str:
    """Write the report (default: report.html beside the warehouse) and link it from the flow run."""
    settings = flow_settings()
    target = Path(output) if output else (settings.lake.folder or settings.state_dir) / "report.html"
    result = build_report(settings.lake, target, days=days, spool=settings.spool_dir)
    create_link_artifact(
        key="report",
        link=result.path.resolve().as_uri(),
        link_text=f"shipsync report ({result.drawn} of {len(result.outcomes)} charts)",
        description=f"The report of {settings.lake.describe()}, {days} days",
        _sync=True,  # type: ignore[call-arg]
    )
    create_markdown_artifact(key="report-summary", markdown=result.summary_markdown(), description="shipsync report", _sync=True)  # type: ignore[call-arg]
    print(f"report written to {result.path}: {result.drawn} of {len(result.outcomes)} charts drawn in {result.seconds:.1f} s")
    return str(result.path)
