-- `container_pickup`, one row per container and what stands between it and pickup: number, bill of
-- lading, references and consignee, carrier, status, port of discharge and terminal, where it is
-- picked up (the terminal, or the inland rail terminal for a box that goes on by rail), ETA,
-- arrival, discharge, availability, last free day there and days until it (NULL once the box has
-- left: a deadline that has been met or missed is no longer ahead), the line's last free day (the
-- deadline for the empty's return), holds in force (at the terminal or at the inland facility),
-- fees and their currency, and whether the box is still at the port's terminal. `container_status`:
-- the same with the port's metro area and the last milestone.
-- Days count from today, or from the day in the variable `as_of` (`SET VARIABLE as_of = DATE '...'`).
-- Two views, not one: DuckDB keeps a view's joins whether or not a query reads their columns, so the
-- watch lists (`containers_awaiting_pickup`, `pickup_risk`) read `container_pickup` and skip a year of
-- transport events and the metro areas (on the lake each table scanned costs catalog queries too).
CREATE OR REPLACE VIEW container_pickup AS
-- The three terminals a box names (at the port, where it is picked up, the inland destination) are
-- read from one scan: on the lake every scan of a table costs catalog queries (its files, its
-- inlined rows), whatever the table holds.
WITH terminal_names AS MATERIALIZED (
    SELECT id, name FROM terminals
), boxes AS (
    SELECT c.*,
           -- A box that goes on by rail is picked up (and held, and charged) at the inland facility.
           (c.pod_rail_carrier_scac IS NOT NULL OR c.pod_rail_loaded_at IS NOT NULL OR c.ind_rail_unloaded_at IS NOT NULL
            OR c.ind_facility_lfd_on IS NOT NULL OR c.current_status IN ('awaiting_inland_transfer', 'on_rail')) AS by_rail,
           coalesce(CAST(c.pickup_lfd AS DATE), c.ind_facility_lfd_on) AS last_free_day,
           -- Gone from where it is picked up: out by truck (at the port or inland), on the rail leg
           -- between the port and the inland ramp, delivered or returned empty.
           (c.pod_full_out_at IS NOT NULL OR c.final_destination_full_out_at IS NOT NULL OR c.delivered_at IS NOT NULL
            OR c.empty_terminated_at IS NOT NULL OR (c.pod_rail_departed_at IS NOT NULL AND c.ind_rail_unloaded_at IS NULL)
            OR c.current_status IN ('picked_up', 'off_dock', 'on_rail', 'delivered', 'dropped', 'empty_returned')) AS left_terminal,
           -- One currency, or the several joined with '/' (their sum in fee_total is then no amount).
           nullif(array_to_string(list_sort(list_distinct(
               [f.currency_code FOR f IN coalesce(CASE WHEN c.fee_total IS NOT NULL THEN c.fees_at_pod_terminal END, c.ind_facility_fees, [])
                IF f.currency_code IS NOT NULL])), '/'), '') AS fee_currency,
           CASE WHEN c.holds_at_pod_terminal IS NOT NULL OR c.ind_facility_holds IS NOT NULL
                THEN list_concat(coalesce(c.holds_at_pod_terminal, []), coalesce(c.ind_facility_holds, [])) END AS listed_holds
    FROM containers c
)
SELECT
    c.id AS container_id,
    c.number AS container_number,
    c.shipment_id,
    s.bill_of_lading_number AS bill_of_lading,
    s.ref_numbers,
    s.customer_name,
    s.shipping_line_scac AS carrier,
    s.shipping_line_name AS carrier_name,
    c.current_status,
    s.port_of_discharge_locode AS pod_locode,
    coalesce(p.name, s.port_of_discharge_name) AS pod_name,
    t.name AS pod_terminal,
    coalesce(f.name, CASE WHEN c.by_rail AND s.destination_terminal_type = 'rail_terminal' THEN d.name END, t.name) AS pickup_facility,
    CASE WHEN c.by_rail THEN coalesce(CASE WHEN s.destination_terminal_type = 'rail_terminal' THEN d.name END,
                                      CASE WHEN c.pickup_facility_id IS DISTINCT FROM c.pod_terminal_id THEN f.name END,
                                      s.destination_name) END AS inland_facility,
    s.pod_eta_at,
    c.pod_arrived_at,
    c.pod_discharged_at,
    c.availability_known,
    c.available_for_pickup,
    c.pickup_lfd,
    c.ind_facility_lfd_on,
    c.last_free_day,
    CASE WHEN NOT c.left_terminal
         THEN date_diff('day', coalesce(CAST(getvariable('as_of') AS DATE), current_date), c.last_free_day) END AS days_until_lfd,
    coalesce(CAST(c.ssl_lfd AS DATE), CAST(c.import_deadlines.pickup_lfd_line AS DATE)) AS line_last_free_day,
    c.pod_full_out_at,
    c.final_destination_full_out_at,
    c.left_terminal,
    -- Discharged and still in the port's yard: not out by truck, not gone (or going) inland by rail.
    (c.pod_discharged_at IS NOT NULL AND c.pod_full_out_at IS NULL AND c.pod_rail_departed_at IS NULL
     AND c.ind_rail_unloaded_at IS NULL AND NOT c.left_terminal) AS at_port_terminal,
    -- NULL when neither the terminal nor the facility sent a list.
    CASE WHEN c.listed_holds IS NOT NULL THEN coalesce(list_bool_or([h.status = 'hold' FOR h IN c.listed_holds]), false) END AS has_holds,
    [h.name FOR h IN coalesce(c.listed_holds, []) IF h.status = 'hold'] AS holds,
    -- The terminal's total, else the inland facility's (its `total` line, else the sum of its lines).
    coalesce(c.fee_total,
             list_sum([f.amount FOR f IN c.ind_facility_fees IF f.type = 'total']),
             list_sum([f.amount FOR f IN c.ind_facility_fees IF f.type IS DISTINCT FROM 'total'])) AS fee_total,
    c.fee_currency
FROM boxes c
LEFT JOIN shipments s ON s.id = c.shipment_id
LEFT JOIN ports p ON p.id = s.port_of_discharge_id
LEFT JOIN terminal_names t ON t.id = c.pod_terminal_id
LEFT JOIN terminal_names f ON f.id = c.pickup_facility_id
LEFT JOIN terminal_names d ON d.id = s.destination_terminal_id;

CREATE OR REPLACE VIEW container_status AS
WITH last_milestone AS (
    SELECT container_id, arg_max(event, timestamp) AS event, max(timestamp) AS at
    FROM transport_events WHERE timestamp IS NOT NULL GROUP BY container_id
)
SELECT
    b.container_id, b.container_number, b.shipment_id, b.bill_of_lading, b.ref_numbers, b.customer_name, b.carrier, b.carrier_name,
    b.current_status, b.pod_locode, b.pod_name,
    m.name AS pod_metro_area,
    b.pod_terminal, b.pickup_facility, b.inland_facility, b.pod_eta_at, b.pod_arrived_at, b.pod_discharged_at, b.availability_known,
    b.available_for_pickup, b.pickup_lfd, b.ind_facility_lfd_on, b.last_free_day, b.days_until_lfd, b.line_last_free_day,
    b.pod_full_out_at, b.final_destination_full_out_at, b.left_terminal, b.at_port_terminal, b.has_holds, b.holds, b.fee_total,
    b.fee_currency,
    l.event AS last_milestone,
    l.at AS last_milestone_at
FROM container_pickup b
LEFT JOIN (SELECT code, any_value(name) AS name FROM metro_areas GROUP BY code) m ON m.code = b.pod_locode
LEFT JOIN last_milestone l ON l.container_id = b.container_id;
