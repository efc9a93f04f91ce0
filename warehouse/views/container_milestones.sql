-- One row per container milestone (a transport event delivered by webhook): the container and its
-- number, the shipment's bill of lading, what happened, when, where (UN/LOCODE), vessel and voyage.
CREATE OR REPLACE VIEW container_milestones AS
WITH transport AS (
    SELECT e.notification_id, e.event, e.created_at, r.id AS transport_event_id, r.attributes, r.relationships,
           (r.relationships->'container'->'data'->>'id') AS container_id,
           (r.relationships->'shipment'->'data'->>'id') AS shipment_id,
           (r.relationships->'vessel'->'data'->>'id') AS vessel_id
    FROM webhook_events e
    JOIN webhook_event_resources r
      ON r.notification_id = e.notification_id AND r.type = 'transport_event' AND r.id = e.reference_id
)
SELECT
    t.container_id,
    coalesce(c.attributes->>'number', cw.attributes->>'number') AS container_number,
    coalesce(s.attributes->>'bill_of_lading_number', sw.attributes->>'bill_of_lading_number') AS bill_of_lading,
    t.event,
    CAST(t.attributes->>'timestamp' AS TIMESTAMPTZ) AS event_at,
    t.attributes->>'location_locode' AS locode,
    v.attributes->>'name' AS vessel,
    t.attributes->>'voyage_number' AS voyage,
    t.transport_event_id,
    t.notification_id
FROM transport t
LEFT JOIN webhook_event_resources c
  ON c.notification_id = t.notification_id AND c.type = 'container' AND c.id = t.container_id
LEFT JOIN containers cw ON cw.id = t.container_id
LEFT JOIN webhook_event_resources s
  ON s.notification_id = t.notification_id AND s.type = 'shipment' AND s.id = t.shipment_id
LEFT JOIN shipments sw ON sw.id = t.shipment_id
LEFT JOIN webhook_event_resources v
  ON v.notification_id = t.notification_id AND v.type = 'vessel' AND v.id = t.vessel_id;
