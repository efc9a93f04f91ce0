-- One row per field of each `container.updated` changeset: which container (and its shipment), which
-- field, old and new value (as JSON), and when.
CREATE OR REPLACE VIEW container_changes AS
WITH updates AS (
    SELECT e.notification_id, r.attributes, (r.relationships->'container'->'data'->>'id') AS container_id
    FROM webhook_events e
    JOIN webhook_event_resources r
      ON r.notification_id = e.notification_id AND r.type = 'container_updated_event' AND r.id = e.reference_id
    WHERE e.event = 'container.updated'
), fields AS (
    SELECT u.*, unnest(json_keys(u.attributes->'changeset')) AS field FROM updates u
)
SELECT
    f.container_id,
    c.number AS container_number,
    c.shipment_id,
    f.field,
    json_extract(f.attributes->'changeset', '$."' || f.field || '"[0]') AS old_value,
    json_extract(f.attributes->'changeset', '$."' || f.field || '"[1]') AS new_value,
    CAST(f.attributes->>'timestamp' AS TIMESTAMPTZ) AS changed_at,
    f.notification_id
FROM fields f
LEFT JOIN containers c ON c.id = f.container_id;
