-- UN/LOCODE to place: name, region, country, time zone and coordinates, plus how many shipments
-- in the warehouse load, discharge or end there.
CREATE OR REPLACE VIEW metro_area_lookup AS
SELECT
    m.code AS locode,
    m.name,
    m.state_abbr,
    m.country_code,
    m.time_zone,
    m.latitude,
    m.longitude,
    (SELECT count(*) FROM shipments s WHERE s.port_of_lading_locode = m.code) AS shipments_loading,
    (SELECT count(*) FROM shipments s WHERE s.port_of_discharge_locode = m.code) AS shipments_discharging,
    (SELECT count(*) FROM shipments s WHERE s.destination_locode = m.code) AS shipments_destined
FROM metro_areas m;
