"""Two `events load` of one spool at once: each notification is loaded once, with no redelivery row
(both used to stage the same records, and the second commit, replayed on the first's, found them
all known: a false redelivery row for every notification) and each dead letter once."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import orjson

from shipsync.webhooks.framing import encode_record
from shipsync.webhooks.load import LoadReport, load_events
from support.lake import analyst, location, written

NOTIFICATIONS = 400


def notification(n: int) -> bytes:
    data = {"id": f"n-{n}", "type": "webhook_notification", "attributes": {"event": "container.updated"}}
    return orjson.dumps({"data": data, "included": []})


def test_two_loads_at_once_load_each_notification_once_and_record_no_redelivery(tmp_path: Path) -> None:
    spool, warehouse = tmp_path / "spool", tmp_path / "w"
    spool.mkdir(mode=0o700)
    bodies = [notification(n) for n in range(NOTIFICATIONS)] + [b"not json at all"]
    (spool / "segment-00000000000000000001-1.spool").write_bytes(b"".join(encode_record(body, 0) for body in bodies))
    with written(warehouse):  # the lake and its tables, made before the race
        pass

    start = threading.Barrier(2)
    reports: list[LoadReport] = []
    failures: list[BaseException] = []

    def load() -> None:
        start.wait()
        try:
            reports.append(load_events(location(warehouse), spool))
        except BaseException as exc:
            failures.append(exc)

    loads = [threading.Thread(target=load) for _ in range(2)]
    for thread in loads:
        thread.start()
    for thread in loads:
        thread.join()

    assert not failures, failures
    assert sorted(report.loaded for report in reports) == [0, NOTIFICATIONS]
    assert sorted(report.duplicates for report in reports) == [0, 0]
    with analyst(warehouse) as con:
        counts: Any = con.execute(
            "SELECT (SELECT count(*) FROM webhook_events), (SELECT count(DISTINCT notification_id) FROM webhook_events), "
            "(SELECT count(*) FROM webhook_redeliveries), (SELECT count(*) FROM webhook_dead_letters)"
        ).fetchone()
    assert counts == (NOTIFICATIONS, NOTIFICATIONS, 0, 1)
