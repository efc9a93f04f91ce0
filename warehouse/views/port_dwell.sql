-- How long boxes stay at the terminal, from discharge to full out, by port, terminal and carrier
-- (in days); `still_in` counts boxes discharged and not out yet.
CREATE OR REPLACE VIEW port_dwell AS
SELECT
    s.port_of_discharge_locode AS pod_locode,
    coalesce(p.name, s.port_of_discharge_name) AS pod_name,
    t.name AS terminal,
    s.shipping_line_scac AS carrier,
    count(*) FILTER (WHERE c.pod_full_out_at IS NOT NULL) AS containers,
    round(avg(epoch(c.pod_full_out_at - c.pod_discharged_at)) / 86400, 2) AS avg_dwell_days,
    round(median(epoch(c.pod_full_out_at - c.pod_discharged_at)) / 86400, 2) AS median_dwell_days,
    round(max(epoch(c.pod_full_out_at - c.pod_discharged_at)) / 86400, 2) AS max_dwell_days,
    count(*) FILTER (WHERE c.pod_full_out_at IS NULL) AS still_in
FROM containers c
LEFT JOIN shipments s ON s.id = c.shipment_id
LEFT JOIN ports p ON p.id = s.port_of_discharge_id
LEFT JOIN terminals t ON t.id = c.pod_terminal_id
WHERE c.pod_discharged_at IS NOT NULL
GROUP BY ALL;
