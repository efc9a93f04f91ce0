-- A shipment's story in time order: its own milestones (departure and arrival, estimated and actual),
-- each container's transport events, and the estimates the service sent. One row per milestone.
-- Each table is read once (on the lake every scan of a table costs catalog queries, whatever it
-- holds): the shipments feed both their milestones and every row's bill of lading, and the
-- transport events carry their container's number.
CREATE OR REPLACE VIEW shipment_timeline AS
WITH shipment AS MATERIALIZED (
    SELECT id, bill_of_lading_number, port_of_lading_locode, port_of_discharge_locode, destination_locode, pod_voyage_number,
           pol_etd_at, pol_atd_at, pod_original_eta_at, pod_eta_at, pod_ata_at, destination_eta_at, destination_ata_at
    FROM shipments
), shipment_milestones AS (
    SELECT s.id AS shipment_id, NULL::VARCHAR AS container_id, NULL::VARCHAR AS container_number, 'shipment' AS source, m.event,
           m.at_ AS event_at, m.locode, NULL::VARCHAR AS vessel_id,
           CASE WHEN m.locode = s.port_of_discharge_locode THEN s.pod_voyage_number END AS voyage
    FROM shipment s,
    LATERAL (VALUES
        ('estimated departure', s.pol_etd_at, s.port_of_lading_locode),
        ('departed', s.pol_atd_at, s.port_of_lading_locode),
        ('original estimated arrival', s.pod_original_eta_at, s.port_of_discharge_locode),
        ('estimated arrival', s.pod_eta_at, s.port_of_discharge_locode),
        ('arrived', s.pod_ata_at, s.port_of_discharge_locode),
        ('estimated arrival at destination', s.destination_eta_at, s.destination_locode),
        ('arrived at destination', s.destination_ata_at, s.destination_locode)
    ) AS m(event, at_, locode)
    WHERE m.at_ IS NOT NULL
), events AS (
    SELECT coalesce(t.shipment_id, c.shipment_id) AS shipment_id, t.container_id, c.number AS container_number, 'transport_event' AS source,
           t.event, t.timestamp AS event_at, t.location_locode AS locode, t.vessel_id, t.voyage_number AS voyage
    FROM transport_events t LEFT JOIN containers c ON c.id = t.container_id
    UNION ALL
    SELECT shipment_id, NULL, NULL, 'estimated_event', event, estimated_timestamp, location_locode, vessel_id, voyage_number
    FROM estimated_events
), everything AS (
    SELECT * FROM shipment_milestones UNION ALL SELECT * FROM events
)
SELECT
    e.shipment_id,
    s.bill_of_lading_number AS bill_of_lading,
    e.container_number,
    e.source,
    e.event,
    e.event_at,
    e.locode,
    coalesce(p.name, m.name) AS place,
    v.name AS vessel,
    e.voyage
FROM everything e
LEFT JOIN shipment s ON s.id = e.shipment_id
LEFT JOIN (SELECT code, any_value(name) AS name FROM ports GROUP BY code) p ON p.code = e.locode
LEFT JOIN (SELECT code, any_value(name) AS name FROM metro_areas GROUP BY code) m ON m.code = e.locode
LEFT JOIN vessels v ON v.id = e.vessel_id
WHERE e.shipment_id IS NOT NULL;
