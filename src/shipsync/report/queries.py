"""Every query of `shipsync report`, in one place: the SQL that runs is the SQL the page shows.

A query's text names the report window with `{since}`, `{until}` and `{as_of}`, and the spool's
quarantine folder with `{quarantine}`; `ReportQuery.runnable` puts literal values in their place,
so what an analyst copies from the page runs as is in any DuckDB session on the warehouse.
Days are UTC days (`timezone('UTC', ...)`), whatever the session's time zone.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path


def _timestamp(moment: datetime) -> str:
    return f"TIMESTAMPTZ '{moment.isoformat()}'"


def _string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


@dataclass(frozen=True)
class Window:
    """What the report covers: `days` days up to `as_of`, and where quarantined deliveries are."""

    as_of: datetime
    days: int
    quarantine: Path

    @property
    def since(self) -> datetime:
        return self.as_of - timedelta(days=self.days)

    def dates(self) -> list[date]:
        """Every UTC day the window touches, oldest first."""
        first, last = self.since.astimezone(UTC).date(), self.as_of.astimezone(UTC).date()
        return [first + timedelta(days=n) for n in range((last - first).days + 1)]


@dataclass(frozen=True)
class ReportQuery:
    """One query: its text, the tables or views it needs, and which table's rows come from which command.

    `source` is the table that is empty until `filled_by` has run: when it is, the chart says to run
    that command instead of showing an empty chart.
    """

    key: str
    sql: str
    reads: tuple[str, ...]
    source: str
    filled_by: str

    def runnable(self, window: Window) -> str:
        text = self.sql.strip()
        for name, value in (
            ("{since}", _timestamp(window.since)),
            ("{until}", _timestamp(window.as_of)),
            ("{as_of}", _timestamp(window.as_of)),
            ("{quarantine}", _string(str(window.quarantine / "*.bin"))),
        ):
            text = text.replace(name, value)
        return text


RUNS_PER_FLOW = ReportQuery(
    "runs_per_flow",
    """
SELECT flow,
       count(*) FILTER (WHERE status = 'completed') AS completed,
       count(*) FILTER (WHERE status = 'completed_with_errors') AS "completed with errors",
       count(*) FILTER (WHERE status = 'failed') AS failed,
       count(*) FILTER (WHERE status NOT IN ('completed', 'completed_with_errors', 'failed') OR status IS NULL) AS "running or cut off"
FROM sync_runs
WHERE started_at >= {since} AND started_at < {until}
GROUP BY flow
ORDER BY count(*) DESC, flow
""",
    ("sync_runs",),
    "sync_runs",
    "shipsync pull all",
)

REQUESTS_PER_DAY = ReportQuery(
    "requests_per_day",
    """
SELECT CAST(timezone('UTC', started_at) AS DATE) AS day,
       coalesce(sum(requests), 0) AS requests,
       coalesce(sum(retries), 0) AS retries,
       coalesce(sum(throttled), 0) AS "429s",
       count(*) FILTER (WHERE status = 'failed') AS "failed runs"
FROM sync_runs
WHERE started_at >= {since} AND started_at < {until}
GROUP BY day
ORDER BY day
""",
    ("sync_runs",),
    "sync_runs",
    "shipsync pull all",
)

FRESHNESS = ReportQuery(
    "freshness",
    """
SELECT flow AS "what",
       max(finished_at) FILTER (WHERE status IN ('completed', 'completed_with_errors')) AS "last success",
       round(date_diff('minute', "last success", {as_of}) / 60, 1) AS "hours ago",
       arg_max(status, started_at) AS "last run's status",
       max(started_at) AS "last run started"
FROM sync_runs
GROUP BY flow
UNION ALL
SELECT 'webhook events (newest loaded)', max(loaded_at), round(date_diff('minute', max(loaded_at), {as_of}) / 60, 1), NULL, NULL
FROM webhook_events
HAVING count(*) > 0
ORDER BY "hours ago" DESC NULLS FIRST
""",
    ("sync_runs", "webhook_events"),
    "sync_runs",
    "shipsync pull all",
)

EVENTS_PER_DAY = ReportQuery(
    "events_per_day",
    """
WITH daily AS (
    SELECT CAST(timezone('UTC', received_at) AS DATE) AS day, coalesce(event, '(no kind)') AS event, count(*) AS events
    FROM webhook_events
    WHERE received_at >= {since} AND received_at < {until}
    GROUP BY ALL
), top_kinds AS (
    SELECT event FROM daily GROUP BY event ORDER BY sum(events) DESC, event LIMIT 7
)
SELECT day, CASE WHEN event IN (SELECT event FROM top_kinds) THEN event ELSE 'other kinds' END AS kind, sum(events) AS events
FROM daily
GROUP BY ALL
ORDER BY day, kind
""",
    ("webhook_events",),
    "webhook_events",
    "shipsync events load",
)

DELIVERY_HEALTH = ReportQuery(
    "delivery_health",
    """
WITH problems AS (
    SELECT received_at AS at, 'conflicts (same id, other body)' AS problem FROM webhook_event_conflicts
    UNION ALL
    SELECT coalesce(received_at, dead_lettered_at), 'dead letters (could not be loaded)' FROM webhook_dead_letters
    UNION ALL
    -- the receiver names each quarantined body <nanoseconds since 1970>-<pid>.bin
    SELECT to_timestamp(CAST(split_part(parse_filename(file), '-', 1) AS BIGINT) / 1e9), 'quarantined (signed, not a notification)'
    FROM glob({quarantine})
)
SELECT CAST(timezone('UTC', at) AS DATE) AS day, problem, count(*) AS deliveries
FROM problems
WHERE at >= {since} AND at < {until}
GROUP BY ALL
ORDER BY day, problem
""",
    ("webhook_event_conflicts", "webhook_dead_letters"),
    "webhook_events",
    "shipsync events load",
)

HEALTH_QUERIES = (RUNS_PER_FLOW, REQUESTS_PER_DAY, FRESHNESS, EVENTS_PER_DAY, DELIVERY_HEALTH)
