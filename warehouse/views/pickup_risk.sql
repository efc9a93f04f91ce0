-- Containers at risk of demurrage. `containers_awaiting_pickup`: every container discharged or
-- available and not picked up (nor on or waiting for the rail leg), with its consignee and
-- references, its last free day where it is picked up, the line's last free day, holds, fees and
-- why it may be at risk. `pickup_risk`: those on hold or with a last free day
-- passed or within 3 days (for another horizon, filter `containers_awaiting_pickup`:
-- `WHERE days_until_lfd <= 7 OR has_holds`). Days count from today, or from the variable `as_of`.
CREATE OR REPLACE VIEW containers_awaiting_pickup AS
SELECT
    container_id,
    container_number,
    shipment_id,
    bill_of_lading,
    ref_numbers,
    customer_name,
    carrier,
    pod_locode,
    pod_name,
    pod_terminal,
    pickup_facility,
    inland_facility,
    current_status,
    available_for_pickup,
    pickup_lfd,
    last_free_day,
    days_until_lfd,
    line_last_free_day,
    has_holds,
    holds,
    fee_total,
    fee_currency,
    concat_ws('; ',
        CASE WHEN days_until_lfd = -1 THEN 'last free day passed 1 day ago'
             WHEN days_until_lfd < 0 THEN 'last free day passed ' || -days_until_lfd || ' days ago'
             WHEN days_until_lfd = 0 THEN 'last free day today'
             WHEN days_until_lfd = 1 THEN 'last free day tomorrow'
             WHEN days_until_lfd IS NOT NULL THEN 'last free day in ' || days_until_lfd || ' days' END,
        CASE WHEN has_holds THEN 'on hold: ' || array_to_string(holds, ', ') END) AS risk
FROM container_pickup
WHERE (pod_discharged_at IS NOT NULL OR available_for_pickup)
  AND NOT left_terminal
  AND coalesce(current_status, '') <> 'awaiting_inland_transfer';

CREATE OR REPLACE VIEW pickup_risk AS
SELECT * FROM containers_awaiting_pickup
WHERE days_until_lfd <= 3 OR has_holds
ORDER BY days_until_lfd NULLS LAST, container_number;
