-- One row per container milestone (a transport event, pulled or delivered by webhook): the container
-- and its number, the shipment's bill of lading, what happened, when, where (UN/LOCODE), vessel and voyage.
CREATE OR REPLACE VIEW container_milestones AS
SELECT
    t.container_id,
    c.number AS container_number,
    s.bill_of_lading_number AS bill_of_lading,
    t.event,
    t.timestamp AS event_at,
    t.location_locode AS locode,
    v.name AS vessel,
    t.voyage_number AS voyage,
    t.id AS transport_event_id,
    t.last_event_id AS notification_id
FROM transport_events t
LEFT JOIN containers c ON c.id = t.container_id
LEFT JOIN shipments s ON s.id = coalesce(t.shipment_id, c.shipment_id)
LEFT JOIN vessels v ON v.id = t.vessel_id;
