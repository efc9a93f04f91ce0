"""Every query of `shipsync report`, in one place: the SQL that runs is the SQL the page shows.

`{since}`, `{until}`, `{as_of}`, `{now}` and `{quarantine}` become literals (see `report.window`).
A window runs from after `{since}` to `{until}` included (an as-of that is the newest moment shows
it). Days and weeks are UTC days and ISO weeks (`timezone('UTC', ...)`), whatever the session's
time zone. Each query names its clock (the fleet's or the sync's) and, when windowed, how to find
the newest moment it could show.
"""

from __future__ import annotations

from shipsync.report.window import Clock, ReportQuery

FLEET_CLOCK = Clock(
    "fleet",
    "transport event",
    "SELECT max(timestamp) FROM transport_events WHERE timestamp <= {now}",
    ("transport_events",),
    follows_as_of=True,
)
SYNC_CLOCK = Clock(
    "sync",
    "run or webhook delivery",
    "SELECT max(moment) FROM (SELECT max(started_at) AS moment FROM sync_runs UNION ALL SELECT max(received_at) FROM webhook_events) "
    "WHERE moment <= {now}",
    ("sync_runs", "webhook_events"),
    follows_as_of=False,
)
CLOCKS = (FLEET_CLOCK, SYNC_CLOCK)

RUNS_PER_FLOW = ReportQuery(
    "runs_per_flow",
    """
SELECT flow,
       count(*) FILTER (WHERE status = 'completed') AS completed,
       count(*) FILTER (WHERE status = 'completed_with_errors') AS "completed with errors",
       count(*) FILTER (WHERE status = 'failed') AS failed,
       count(*) FILTER (WHERE status NOT IN ('completed', 'completed_with_errors', 'failed') OR status IS NULL) AS "running or cut off"
FROM sync_runs
WHERE started_at > {since} AND started_at <= {until}
GROUP BY flow
ORDER BY count(*) DESC, flow
""",
    ("sync_runs",),
    "sync_runs",
    "shipsync pull all",
    "sync",
    "SELECT max(started_at) FROM sync_runs WHERE started_at <= {now}",
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
WHERE started_at > {since} AND started_at <= {until}
GROUP BY day
ORDER BY day
""",
    ("sync_runs",),
    "sync_runs",
    "shipsync pull all",
    "sync",
    "SELECT max(started_at) FROM sync_runs WHERE started_at <= {now}",
)

FRESHNESS = ReportQuery(
    "freshness",
    """
SELECT flow AS "what",
       max(finished_at) FILTER (WHERE status IN ('completed', 'completed_with_errors')) AS "last success",
       round(date_diff('minute', "last success", {now}) / 60, 1) AS "hours ago",
       arg_max(status, started_at) AS "last run's status",
       max(started_at) AS "last run started"
FROM sync_runs
GROUP BY flow
UNION ALL
SELECT 'webhook events (newest loaded)', max(loaded_at), round(date_diff('minute', max(loaded_at), {now}) / 60, 1), NULL, NULL
FROM webhook_events
HAVING count(*) > 0
ORDER BY "hours ago" DESC NULLS FIRST
""",
    ("sync_runs", "webhook_events"),
    "sync_runs",
    "shipsync pull all",
    "sync",
)

EVENTS_PER_DAY = ReportQuery(
    "events_per_day",
    """
WITH daily AS (
    SELECT CAST(timezone('UTC', received_at) AS DATE) AS day, coalesce(event, '(no kind)') AS event, count(*) AS events
    FROM webhook_events
    WHERE received_at > {since} AND received_at <= {until}
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
    "sync",
    "SELECT max(received_at) FROM webhook_events WHERE received_at <= {now}",
)

DELIVERY_HEALTH = ReportQuery(
    "delivery_health",
    """
WITH problems AS (
    SELECT received_at AS moment, 'conflicts (same id, other body)' AS problem FROM webhook_event_conflicts
    UNION ALL
    SELECT received_at, 'duplicates (same id, same body: a retry)' FROM webhook_redeliveries
    UNION ALL
    SELECT coalesce(received_at, dead_lettered_at), 'dead letters (could not be loaded)' FROM webhook_dead_letters
    UNION ALL
    -- the receiver names each quarantined body <nanoseconds since 1970>-<pid>.bin
    SELECT to_timestamp(CAST(split_part(parse_filename(file), '-', 1) AS BIGINT) / 1e9), 'quarantined (signed, not a notification)'
    FROM glob({quarantine})
)
SELECT CAST(timezone('UTC', moment) AS DATE) AS day, problem, count(*) AS deliveries
FROM problems
WHERE moment > {since} AND moment <= {until}
GROUP BY ALL
ORDER BY day, problem
""",
    ("webhook_event_conflicts", "webhook_redeliveries", "webhook_dead_letters"),
    "webhook_events",
    "shipsync events load",
    "sync",
    """
SELECT max(moment) FROM (
    SELECT max(received_at) AS moment FROM webhook_event_conflicts
    UNION ALL SELECT max(received_at) FROM webhook_redeliveries
    UNION ALL SELECT max(coalesce(received_at, dead_lettered_at)) FROM webhook_dead_letters
) WHERE moment <= {now}
""",
)

# Journey order of the service's `current_status` values; values it adds later come after them.
STATUS_ORDER = (
    "['new', 'on_ship', 'on_rail', 'grounded', 'not_available', 'available', 'awaiting_inland_transfer', "
    "'picked_up', 'off_dock', 'loaded', 'delivered', 'dropped', 'empty_returned']"
)

CONTAINERS_BY_STATUS = ReportQuery(
    "containers_by_status",
    f"""
SELECT coalesce(current_status, '(no status)') AS status, count(*) AS containers
FROM container_pickup
GROUP BY current_status
ORDER BY coalesce(list_position({STATUS_ORDER}, current_status), 99), status
""",
    ("container_pickup",),
    "containers",
    "shipsync pull containers",
)

CONTAINERS_BY_PORT = ReportQuery(
    "containers_by_port",
    """
SELECT coalesce(c.pod_locode, '(no port yet)') AS port, any_value(coalesce(m.name, c.pod_name)) AS place,
       count(*) FILTER (WHERE pod_arrived_at IS NULL AND pod_discharged_at IS NULL) AS "on the way",
       count(*) FILTER (WHERE (pod_arrived_at IS NOT NULL OR pod_discharged_at IS NOT NULL) AND pod_full_out_at IS NULL) AS "at the port",
       count(*) FILTER (WHERE pod_full_out_at IS NOT NULL) AS "out of the port"
FROM container_pickup c
LEFT JOIN metro_areas m ON m.code = c.pod_locode
GROUP BY ALL
ORDER BY count(*) DESC, port
LIMIT 25
""",
    ("container_pickup", "metro_areas"),
    "containers",
    "shipsync pull containers",
)

ARRIVALS_PER_WEEK = ReportQuery(
    "arrivals_per_week",
    """
WITH boxes AS (
    SELECT c.pod_arrived_at AS arrived, s.pod_eta_at AS eta, coalesce(s.pod_original_eta_at, s.pod_eta_at) AS original_eta
    FROM containers c JOIN shipments s ON s.id = c.shipment_id
), dated AS (
    SELECT 'expected (original ETA)' AS measure, original_eta AS moment FROM boxes
    UNION ALL SELECT 'arrived (actual)', arrived FROM boxes
    UNION ALL SELECT 'not arrived yet (current ETA)', eta FROM boxes WHERE arrived IS NULL
)
SELECT CAST(date_trunc('week', timezone('UTC', moment)) AS DATE) AS week, measure, count(*) AS containers
FROM dated
WHERE moment > {since} AND moment <= {until} + INTERVAL 28 DAY
GROUP BY ALL
ORDER BY week, measure
""",
    ("containers", "shipments"),
    "containers",
    "shipsync pull containers",
    "fleet",
    "SELECT max(pod_arrived_at) FROM containers WHERE pod_arrived_at <= {now}",
)

# The pickup_risk view's rows, with the days left counted to the report's as-of rather than to
# today: a warehouse of last year is at risk as of its own days. A box that went on by rail is due
# at its inland facility (`last_free_day`, `pickup_facility`).
PICKUP_RISK = ReportQuery(
    "pickup_risk",
    """
SELECT container_number, bill_of_lading, carrier, pod_locode AS port, pickup_facility AS terminal, current_status AS status,
       last_free_day AS "last free day",
       date_diff('day', CAST(timezone('UTC', {as_of}) AS DATE), last_free_day) AS "days left", holds, fee_total AS fees
FROM containers_awaiting_pickup
WHERE "days left" <= 3 OR has_holds
ORDER BY "days left" NULLS LAST, container_number
""",
    ("containers_awaiting_pickup",),
    "containers",
    "shipsync pull containers",
)

DWELL = ReportQuery(
    "dwell",
    """
WITH dwell AS (
    SELECT coalesce(s.port_of_discharge_locode, '(no port)') || ' · ' || coalesce(t.name, '(no terminal)') AS label,
           epoch(c.pod_full_out_at - c.pod_discharged_at) / 86400 AS days
    FROM containers c
    LEFT JOIN shipments s ON s.id = c.shipment_id
    LEFT JOIN terminals t ON t.id = c.pod_terminal_id
    WHERE c.pod_full_out_at > {since} AND c.pod_full_out_at <= {until} AND c.pod_discharged_at IS NOT NULL
)
SELECT label, count(*) AS n, quantile_cont(days, 0.05) AS p05, quantile_cont(days, 0.25) AS p25, median(days) AS p50,
       quantile_cont(days, 0.75) AS p75, quantile_cont(days, 0.95) AS p95, avg(days) AS mean
FROM dwell
GROUP BY label
ORDER BY n DESC, label
LIMIT 20
""",
    ("containers", "shipments", "terminals"),
    "containers",
    "shipsync pull containers",
    "fleet",
    "SELECT max(pod_full_out_at) FROM containers WHERE pod_discharged_at IS NOT NULL AND pod_full_out_at <= {now}",
)

ETA_SLIPPAGE = ReportQuery(
    "eta_slippage",
    """
SELECT coalesce(e.carrier, '(no carrier)') || coalesce(' · ' || any_value(l.name), '') AS label, count(*) AS n,
       quantile_cont(slip_days, 0.05) AS p05, quantile_cont(slip_days, 0.25) AS p25, median(slip_days) AS p50,
       quantile_cont(slip_days, 0.75) AS p75, quantile_cont(slip_days, 0.95) AS p95, avg(slip_days) AS mean
FROM eta_changes e
LEFT JOIN shipping_lines l ON l.scac = e.carrier
WHERE slip_days IS NOT NULL AND coalesce(pod_ata_at, pod_eta_at) > {since} AND coalesce(pod_ata_at, pod_eta_at) <= {until}
GROUP BY e.carrier
ORDER BY p50 DESC, label
""",
    ("eta_changes", "shipping_lines"),
    "shipments",
    "shipsync pull shipments",
    "fleet",
    "SELECT max(moment) FROM (SELECT coalesce(pod_ata_at, pod_eta_at) AS moment FROM eta_changes WHERE slip_days IS NOT NULL) "
    "WHERE moment <= {now}",
)
