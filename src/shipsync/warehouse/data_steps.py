"""Data-moving steps of migrations: each one self-contained, run once inside the migration's
transaction when a file made by an older shipsync is opened (see `migrate.DATA_STEPS`)."""

from __future__ import annotations

import duckdb


def tracking_request_tags_from_shipments(con: duckdb.DuckDBPyConnection) -> None:
    """Before schema 7, a tracking request's tags were read only from `tags`; deliveries and newer
    answers send them as `shipment_tags`, so those rows hold NULL. Fill them from the newest
    delivered copy of the request, else from the tracked shipment as stored."""
    con.execute(
        """
        UPDATE tracking_requests t SET tags = s.tags
        FROM (
            SELECT r.id, arg_max(from_json(r.attributes->'shipment_tags', '["VARCHAR"]'), e.created_at) AS tags
            FROM webhook_event_resources r
            JOIN webhook_events e ON e.notification_id = r.notification_id
            WHERE r.type = 'tracking_request' AND json_type(r.attributes->'shipment_tags') = 'ARRAY'
            GROUP BY r.id
        ) s
        WHERE t.id = s.id AND t.tags IS NULL
        """
    )
    con.execute(
        """
        UPDATE tracking_requests t SET tags = from_json(s.attributes->'tags', '["VARCHAR"]')
        FROM shipments s
        WHERE t.tags IS NULL AND t.tracked_object_id = s.id AND json_type(s.attributes->'tags') = 'ARRAY'
        """
    )
