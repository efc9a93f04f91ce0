-- Containers at risk of demurrage: discharged or available, not picked up, and either on hold or with
-- a last free day that has passed or falls within N days. `pickup_risk_within(N)` takes N; the view
-- `pickup_risk` is N = 3.
CREATE OR REPLACE MACRO pickup_risk_within(days) AS TABLE
SELECT
    container_number,
    bill_of_lading,
    carrier,
    pod_locode,
    pod_terminal,
    current_status,
    available_for_pickup,
    pickup_lfd,
    days_until_lfd,
    has_holds,
    holds,
    fee_total,
    concat_ws('; ',
        CASE WHEN days_until_lfd < 0 THEN 'last free day passed ' || -days_until_lfd || ' days ago'
             WHEN days_until_lfd <= days THEN 'last free day in ' || days_until_lfd || ' days' END,
        CASE WHEN has_holds THEN 'on hold: ' || array_to_string(holds, ', ') END) AS risk
FROM container_status
WHERE (pod_discharged_at IS NOT NULL OR available_for_pickup)
  AND pod_full_out_at IS NULL
  AND coalesce(current_status, '') NOT IN ('picked_up', 'delivered', 'empty_returned', 'off_dock', 'on_rail', 'dropped')
  AND (days_until_lfd <= days OR has_holds)
ORDER BY days_until_lfd NULLS LAST, container_number;

CREATE OR REPLACE VIEW pickup_risk AS FROM pickup_risk_within(3);
