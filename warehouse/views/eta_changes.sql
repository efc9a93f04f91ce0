-- How far each shipment's arrival slipped: the original ETA at the port of discharge against the
-- current one (or the actual arrival), the estimates of that arrival the service sent (the
-- shipment's and its containers' estimated events of the vessel's arrival: one estimate however many
-- copies, counted by when it was made) and the container changesets that moved an ETA.
CREATE OR REPLACE VIEW eta_changes AS
WITH estimates AS (
    SELECT shipment_id, count(DISTINCT created_at) AS estimates, min(estimated_timestamp) AS earliest_estimate,
           max(estimated_timestamp) AS latest_estimate, arg_max(estimated_timestamp, created_at) AS last_estimate,
           max(created_at) AS last_estimate_made_at
    FROM estimated_events
    WHERE event IN ('shipment.estimated.arrival', 'container.transport.estimated.vessel_arrived')
    GROUP BY shipment_id
), changesets AS (
    SELECT c.shipment_id, count(*) AS eta_changesets
    FROM container_changes ch JOIN containers c ON c.id = ch.container_id
    WHERE ch.field LIKE '%eta%' GROUP BY c.shipment_id
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
    coalesce(e.estimates, 0) AS estimates,
    e.earliest_estimate,
    e.latest_estimate,
    e.last_estimate,
    e.last_estimate_made_at,
    coalesce(ch.eta_changesets, 0) AS eta_changesets
FROM shipments s
LEFT JOIN estimates e ON e.shipment_id = s.id
LEFT JOIN changesets ch ON ch.shipment_id = s.id;
