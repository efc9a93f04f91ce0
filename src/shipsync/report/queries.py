"""Every query of `shipsync report`, in one place: the SQL that runs is the SQL the page shows.

`{since}`, `{until}`, `{as_of}`, `{now}`, `{quarantine}` and the tariff's `{demurrage_per_day}`,
`{detention_per_day}` and `{currency}` become literals (see `report.window`). A window runs from
after `{since}` to `{until}` included (an as-of that is the newest moment shows it). Days and weeks
are UTC days and ISO weeks (`timezone('UTC', ...)`), whatever the session's time zone. Each query
names its clock (the fleet's or the sync's) and, when windowed, how to find the newest moment it
could show.

A newest moment is `max(x) FILTER (WHERE x IS NOT NULL)`, never a bare `max(x)`: DuckLake answers a
bare `max` of a NOT NULL column from the table's statistics, which keep the bounds of rows since
deleted, so a table that never kept a row answers 1970-01-01 (see duckdb/ducklake#1192: min/max
from statistics "does not work in table with deletes").
"""

from __future__ import annotations

from shipsync.report.window import Clock, ReportQuery

FLEET_CLOCK = Clock(
    "fleet",
    "transport event",
    "SELECT max(timestamp) FILTER (WHERE timestamp IS NOT NULL) FROM transport_events WHERE timestamp <= {now}",
    ("transport_events",),
    follows_as_of=True,
)
SYNC_CLOCK = Clock(
    "sync",
    "run or webhook delivery",
    "SELECT max(moment) FROM (SELECT max(started_at) FILTER (WHERE started_at IS NOT NULL) AS moment FROM sync_runs "
    "UNION ALL SELECT max(received_at) FILTER (WHERE received_at IS NOT NULL) FROM webhook_events) WHERE moment <= {now}",
    ("sync_runs", "webhook_events"),
    follows_as_of=False,
)
CLOCKS = (FLEET_CLOCK, SYNC_CLOCK)

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
    "SELECT max(started_at) FILTER (WHERE started_at IS NOT NULL) FROM sync_runs WHERE started_at <= {now}",
)

# Per kind of run: its last success, how its last run ended and when it started, and how many
# runs (and failed runs) started in the window; the newest webhook event loaded is one more line.
SYNC_STATUS = ReportQuery(
    "sync_status",
    """
WITH kinds AS (
    SELECT flow AS what,
           max(finished_at) FILTER (WHERE status IN ('completed', 'completed_with_errors')) AS last_success,
           arg_max(status, started_at) AS last_status,
           max(started_at) FILTER (WHERE started_at IS NOT NULL) AS last_started,
           count(*) FILTER (WHERE started_at > {since} AND started_at <= {until}) AS runs,
           count(*) FILTER (WHERE status = 'failed' AND started_at > {since} AND started_at <= {until}) AS failed
    FROM sync_runs
    GROUP BY flow
    UNION ALL
    SELECT 'webhook_events', max(loaded_at) FILTER (WHERE loaded_at IS NOT NULL), NULL, NULL,
           count(*) FILTER (WHERE received_at > {since} AND received_at <= {until}), NULL
    FROM webhook_events
    HAVING count(*) > 0
)
SELECT * FROM kinds
ORDER BY what = 'webhook_events', coalesce(last_started, last_success) DESC NULLS LAST, what
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
    "SELECT max(received_at) FILTER (WHERE received_at IS NOT NULL) FROM webhook_events WHERE received_at <= {now}",
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
    SELECT max(received_at) FILTER (WHERE received_at IS NOT NULL) AS moment FROM webhook_event_conflicts
    UNION ALL SELECT max(received_at) FILTER (WHERE received_at IS NOT NULL) FROM webhook_redeliveries
    UNION ALL SELECT max(coalesce(received_at, dead_lettered_at)) FILTER (WHERE coalesce(received_at, dead_lettered_at) IS NOT NULL)
    FROM webhook_dead_letters
) WHERE moment <= {now}
""",
)

# Journey order of the service's `current_status` values; values it adds later come after them.
STATUS_ORDER = (
    "['new', 'on_ship', 'on_rail', 'grounded', 'not_available', 'available', 'awaiting_inland_transfer', "
    "'picked_up', 'off_dock', 'loaded', 'delivered', 'dropped', 'empty_returned']"
)
# Boxes whose journey is over for the fleet manager: drawn apart, never in the charts' bars.
DONE_STATUSES = ("delivered", "empty_returned")

HEADLINE = ReportQuery(
    "headline",
    """
WITH boxes AS MATERIALIZED (
    SELECT current_status, pod_discharged_at, at_port_terminal, fee_total, fee_currency FROM container_pickup
), at_risk AS (
    SELECT count(*) AS boxes FROM containers_awaiting_pickup
    WHERE date_diff('day', CAST(timezone('UTC', {as_of}) AS DATE), last_free_day) <= 3 OR has_holds
), fees AS (
    SELECT list({'currency': currency, 'amount': amount, 'boxes': boxes} ORDER BY amount DESC) AS fees
    FROM (
        SELECT fee_currency AS currency, sum(fee_total) AS amount, count(*) AS boxes
        FROM boxes
        WHERE fee_total > 0 AND current_status IS DISTINCT FROM 'empty_returned'
        GROUP BY ALL
    )
)
SELECT count(*) FILTER (WHERE current_status = 'on_ship' AND pod_discharged_at IS NULL) AS on_the_water,
       count(*) FILTER (WHERE at_port_terminal) AS waiting_at_the_port,
       any_value((SELECT boxes FROM at_risk)) AS at_risk,
       any_value((SELECT fees FROM fees)) AS fees_to_date
FROM boxes
""",
    ("container_pickup", "containers_awaiting_pickup"),
    "containers",
    "shipsync pull containers",
)

# The pickup_risk view's rows, with the days left counted to the report's as-of rather than to
# today (a warehouse of last year is at risk as of its own days), the consignee, the references a
# person searches by (the shipment's reference numbers, its bill of lading, and a purchase order
# number kept as a custom field of the container or its shipment), and demurrage and detention
# projected with the tariff's daily rates: demurrage for each day past the last free day,
# detention for each day past the line's last free day (the empty's return deadline), to the
# report's day and to the line's last free day.
PICKUP_RISK = ReportQuery(
    "pickup_risk",
    """
WITH at_risk AS (
    SELECT *, CAST(timezone('UTC', {as_of}) AS DATE) AS today, date_diff('day', today, last_free_day) AS days_left
    FROM containers_awaiting_pickup
    WHERE days_left <= 3 OR has_holds
), purchase_orders AS (
    SELECT entity_id, string_agg(DISTINCT coalesce(display_value, value ->> '$'), ', ') AS po
    FROM custom_fields
    WHERE api_slug IN ('po_number', 'po', 'purchase_order', 'purchase_order_number') AND entity_type IN ('container', 'shipment')
    GROUP BY entity_id
), projected AS (
    SELECT r.*, coalesce(pc.po, ps.po) AS po,
           greatest(0, date_diff('day', last_free_day, today)) AS demurrage_days,
           greatest(0, date_diff('day', line_last_free_day, today)) AS detention_days,
           greatest(0, date_diff('day', last_free_day, line_last_free_day)) AS demurrage_days_at_line_lfd
    FROM at_risk r
    LEFT JOIN purchase_orders pc ON pc.entity_id = r.container_id
    LEFT JOIN purchase_orders ps ON ps.entity_id = r.shipment_id
)
SELECT container_number AS container, customer_name AS consignee, bill_of_lading, ref_numbers, po,
       pod_locode, pod_name AS port, pod_terminal AS port_terminal, inland_facility AS inland_ramp,
       current_status AS status, last_free_day, days_left, holds, fee_total AS fees, fee_currency,
       demurrage_days, detention_days,
       demurrage_days * {demurrage_per_day} + detention_days * coalesce({detention_per_day}, 0) AS cost_to_date,
       demurrage_days_at_line_lfd * {demurrage_per_day} AS cost_at_line_lfd,
       demurrage_days_at_line_lfd, {currency} AS tariff_currency,
       line_last_free_day AS return_empty_by
FROM projected
ORDER BY days_left NULLS LAST, container_number
""",
    ("containers_awaiting_pickup", "custom_fields"),
    "containers",
    "shipsync pull containers",
)

UPCOMING_ARRIVALS = ReportQuery(
    "upcoming_arrivals",
    """
SELECT CAST(date_trunc('week', timezone('UTC', s.pod_eta_at)) AS DATE) AS week,
       s.pod_vessel_name AS vessel, s.pod_voyage_number AS voyage,
       s.port_of_discharge_locode AS pod_locode, coalesce(p.name, s.port_of_discharge_name) AS port,
       min(s.pod_eta_at) AS eta, count(c.id) AS boxes, count(DISTINCT s.id) AS shipments
FROM shipments s
LEFT JOIN containers c ON c.shipment_id = s.id
LEFT JOIN ports p ON p.id = s.port_of_discharge_id
WHERE s.pod_ata_at IS NULL AND c.pod_arrived_at IS NULL
  AND s.pod_eta_at > {as_of} - INTERVAL 2 DAY AND s.pod_eta_at <= {as_of} + INTERVAL 28 DAY
GROUP BY ALL
ORDER BY eta, vessel, port
""",
    ("shipments", "containers", "ports"),
    "shipments",
    "shipsync pull shipments",
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

# Each box in one column: at sea, in the port's yard (`at_port_terminal`), gone on by rail and not
# yet picked up inland, picked up (out, not yet back empty), or returned empty (drawn apart).
CONTAINERS_BY_PORT = ReportQuery(
    "containers_by_port",
    """
WITH boxes AS (
    SELECT c.*, c.current_status = 'empty_returned' AS returned FROM container_pickup c
)
SELECT coalesce(b.pod_locode, '(no port yet)') AS port, any_value(coalesce(m.name, b.pod_name)) AS place,
       count(*) FILTER (WHERE NOT returned AND pod_arrived_at IS NULL AND pod_discharged_at IS NULL) AS "on the way",
       count(*) FILTER (WHERE at_port_terminal) AS "at the port terminal",
       count(*) FILTER (WHERE NOT returned AND NOT at_port_terminal AND inland_facility IS NOT NULL
                        AND final_destination_full_out_at IS NULL AND current_status IS DISTINCT FROM 'delivered') AS "gone on by rail",
       count(*) FILTER (WHERE NOT returned AND NOT at_port_terminal AND (pod_arrived_at IS NOT NULL OR pod_discharged_at IS NOT NULL)
                        AND NOT (inland_facility IS NOT NULL AND final_destination_full_out_at IS NULL
                                 AND current_status IS DISTINCT FROM 'delivered')) AS "picked up",
       count(*) FILTER (WHERE returned) AS "returned empty"
FROM boxes b
LEFT JOIN metro_areas m ON m.code = b.pod_locode
GROUP BY ALL
ORDER BY count(*) FILTER (WHERE NOT returned) DESC, count(*) DESC, port
LIMIT 25
""",
    ("container_pickup", "metro_areas"),
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
    "SELECT max(pod_full_out_at) FILTER (WHERE pod_full_out_at IS NOT NULL) FROM containers "
    "WHERE pod_discharged_at IS NOT NULL AND pod_full_out_at <= {now}",
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
    "SELECT max(moment) FILTER (WHERE moment IS NOT NULL) FROM "
    "(SELECT coalesce(pod_ata_at, pod_eta_at) AS moment FROM eta_changes WHERE slip_days IS NOT NULL) WHERE moment <= {now}",
)
