-- How long boxes stay at the port of discharge's terminal, by port, terminal and carrier: from
-- discharge until the box left the terminal (full out by truck, or departed by rail), in days.
-- `still_in` counts the boxes discharged that are still at the terminal: not out by truck or rail,
-- not delivered nor returned empty (a box that went on by rail never has a full out at the port).
CREATE OR REPLACE VIEW port_dwell AS
WITH boxes AS (
    SELECT c.*, coalesce(c.pod_full_out_at, c.pod_rail_departed_at) AS left_terminal_at
    FROM containers c
    WHERE c.pod_discharged_at IS NOT NULL
)
SELECT
    s.port_of_discharge_locode AS pod_locode,
    coalesce(p.name, s.port_of_discharge_name) AS pod_name,
    t.name AS terminal,
    s.shipping_line_scac AS carrier,
    count(*) FILTER (WHERE b.left_terminal_at IS NOT NULL) AS containers,
    round(avg(epoch(b.left_terminal_at - b.pod_discharged_at)) / 86400, 2) AS avg_dwell_days,
    round(median(epoch(b.left_terminal_at - b.pod_discharged_at)) / 86400, 2) AS median_dwell_days,
    round(max(epoch(b.left_terminal_at - b.pod_discharged_at)) / 86400, 2) AS max_dwell_days,
    count(*) FILTER (
        WHERE b.left_terminal_at IS NULL
          AND b.final_destination_full_out_at IS NULL
          AND b.delivered_at IS NULL
          AND b.empty_terminated_at IS NULL
          AND coalesce(b.current_status, '') NOT IN ('on_rail', 'picked_up', 'off_dock', 'delivered', 'dropped', 'empty_returned')
    ) AS still_in
FROM boxes b
LEFT JOIN shipments s ON s.id = b.shipment_id
LEFT JOIN ports p ON p.id = s.port_of_discharge_id
LEFT JOIN terminals t ON t.id = b.pod_terminal_id
GROUP BY ALL;
