-- One row per container: where it is and what stands between it and pickup. Number, bill of lading,
-- carrier, status, port of discharge (and its metro area) and terminal, ETA, arrival, discharge,
-- availability, last free day and days until it, holds, fees, and the last milestone and when.
CREATE OR REPLACE VIEW container_status AS
WITH last_milestone AS (
    SELECT container_id, arg_max(event, timestamp) AS event, max(timestamp) AS at
    FROM transport_events WHERE timestamp IS NOT NULL GROUP BY container_id
)
SELECT
    c.id AS container_id,
    c.number AS container_number,
    s.bill_of_lading_number AS bill_of_lading,
    s.shipping_line_scac AS carrier,
    s.shipping_line_name AS carrier_name,
    c.current_status,
    s.port_of_discharge_locode AS pod_locode,
    coalesce(p.name, s.port_of_discharge_name) AS pod_name,
    m.name AS pod_metro_area,
    t.name AS pod_terminal,
    s.pod_eta_at,
    c.pod_arrived_at,
    c.pod_discharged_at,
    c.availability_known,
    c.available_for_pickup,
    c.pickup_lfd,
    date_diff('day', current_date, CAST(c.pickup_lfd AS DATE)) AS days_until_lfd,
    c.pod_full_out_at,
    c.has_holds,
    [h.name FOR h IN c.holds_at_pod_terminal IF h.status = 'hold'] AS holds,
    c.fee_total,
    l.event AS last_milestone,
    l.at AS last_milestone_at
FROM containers c
LEFT JOIN shipments s ON s.id = c.shipment_id
LEFT JOIN ports p ON p.id = s.port_of_discharge_id
LEFT JOIN metro_areas m ON m.code = s.port_of_discharge_locode
LEFT JOIN terminals t ON t.id = c.pod_terminal_id
LEFT JOIN last_milestone l ON l.container_id = c.id;
