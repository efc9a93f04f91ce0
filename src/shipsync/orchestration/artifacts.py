"""What a flow run leaves on the Prefect server for people to read: a pull's counts (markdown), a
spreadsheet run's results (a table), the report (a link to the file and its summary). Never a
secret: the text passes through the redaction first.

Called from the flows' worker threads, hence `_sync=True` (see `task_runner.runs_in_worker_thread`).
"""

from __future__ import annotations

from collections.abc import Sequence

from prefect.artifacts import create_link_artifact, create_markdown_artifact, create_table_artifact

from shipsync.bulk.apply import ApplyReport
from shipsync.redaction import redact
from shipsync.report import ReportResult
from shipsync.warehouse.ledger import RunRecord

# An artifact is for reading: the whole lists are in the warehouse (sync_runs, bulk_results).
SHOWN = 50


def run_counts(records: Sequence[RunRecord], key: str) -> None:
    """A markdown artifact with each run's counts, requests, 429s, retries, 404s and give-ups."""
    lines = []
    for record in records:
        totals = record.totals()
        lines += [
            f"## {record.flow} `{record.run_id}`",
            f"requests {record.stats.requests} · 429s {record.stats.throttled} · retries {record.stats.retries} · "
            f"inserted {totals.inserted} · updated {totals.updated} · unchanged {totals.unchanged}",
            "",
            "| table | inserted | updated | unchanged | deleted |",
            "|---|---:|---:|---:|---:|",
            *(
                f"| {name} | {c['inserted']} | {c['updated']} | {c['unchanged']} | {c['deleted']} |"
                for name, c in record.counts_dict().items()
            ),
            "",
        ]
        if record.not_found:
            lines.append(f"**Not found ({len(record.not_found)}):** " + ", ".join(record.not_found[:SHOWN]))
        if record.errors:
            lines.append(f"**Given up ({len(record.errors)}):**")
            lines += [f"- {e}" for e in record.errors[:SHOWN]]
    create_markdown_artifact(key=key, markdown=redact("\n".join(lines)), description="shipsync run counts", _sync=True)  # type: ignore[call-arg]


def apply_results(report: ApplyReport, key: str) -> None:
    """A table artifact of a spreadsheet run: rows by status, cells by status, then each kind of
    problem with its count and first cell (the results file holds every one)."""
    from shipsync.bulk.record import problem_groups

    rows = [{"counts": "rows", "status": status, "count": count, "detail": ""} for status, count in sorted(report.row_counts.items())]
    rows += [{"counts": "cells", "status": status, "count": count, "detail": ""} for status, count in sorted(report.counts.items())]
    rows += [
        {"counts": "cells", "status": g.status, "count": g.count, "detail": redact(f"{g.column}: {g.reason} (first: {g.examples[0]})")}
        for g in problem_groups(report.changes, report.problems, first=1)[:SHOWN]
    ]
    create_table_artifact(key=key, table=rows, description=f"run {report.run_id}: {report.file}", _sync=True)  # type: ignore[call-arg]


def report_written(result: ReportResult, days: int) -> None:
    """A link to the report's file and its summary as markdown."""
    create_link_artifact(
        key="report",
        link=result.path.resolve().as_uri(),
        link_text=f"shipsync report ({result.drawn} of {len(result.outcomes)} charts)",
        description=f"The report of {result.warehouse}, {days} days",
        _sync=True,  # type: ignore[call-arg]
    )
    create_markdown_artifact(key="report-summary", markdown=result.summary_markdown(), description="shipsync report", _sync=True)  # type: ignore[call-arg]
