-- How far each shipment's arrival slipped: the original ETA at the port of discharge against the
-- current one (or the actual arrival), the estimates of that arrival the service sent (the
-- shipment's and its containers' estimated events of the vessel's arrival: one estimate however many
-- containers repeat it, oldest made first) and the container changesets that moved an ETA.
CREATE OR REPLACE VIEW eta_changes AS
WITH made AS (
    SELECT DISTINCT shipment_id, created_at AS made_at, estimated_timestamp AS estimated_arrival
    FROM estimated_events
    WHERE event IN ('shipment.estimated.arrival', 'container.transport.estimated.vessel_arrived')
), estimates AS (
    SELECT shipment_id,
           list({'made_at': made_at, 'estimated_arrival': estimated_arrival} ORDER BY made_at NULLS FIRST, estimated_arrival) AS estimates,
           count(*) AS estimate_count,
           min(estimated_arrival) AS earliest_estimated_arrival,
           max(estimated_arrival) AS latest_estimated_arrival,
           arg_max(estimated_arrival, made_at) AS last_estimate,
           max(made_at) AS last_estimate_made_at
    FROM made
    GROUP BY shipment_id
), changesets AS (
    SELECT shipment_id, count(*) AS eta_changesets
    FROM container_changes
    WHERE field LIKE '%eta%' AND shipment_id IS NOT NULL GROUP BY shipment_id
)
SELECT
    s.id AS shipment_id,
    s.bill_of_lading_number AS bill_of_lading,
    s.shipping_line_scac AS carrier,
    s.port_of_discharge_locode AS pod_locode,
    s.pod_original_eta_at,
    s.pod_eta_at,
    s.pod_ata_at,
    round(epoch(coalesce(s.pod_ata_at, s.pod_eta_at) - s.pod_original_eta_at) / 86400, 2) AS slip_days,
    coalesce(e.estimates, []) AS estimates,
    coalesce(e.estimate_count, 0) AS estimate_count,
    e.earliest_estimated_arrival,
    e.latest_estimated_arrival,
    e.last_estimate,
    e.last_estimate_made_at,
    coalesce(ch.eta_changesets, 0) AS eta_changesets
FROM shipments s
LEFT JOIN estimates e ON e.shipment_id = s.id
LEFT JOIN changesets ch ON ch.shipment_id = s.id;
