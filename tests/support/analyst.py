"""An analyst as a separate process: `python analyst.py hold|poll WAREHOUSE OUT SECONDS INTERVAL`.

`hold` keeps one read-only connection for the whole time and queries it every INTERVAL seconds;
`poll` opens, queries and closes every INTERVAL seconds. Each query checks that every notification
has all of its resources and no resource lacks its notification, and reports the state it saw.
One JSON line per query to OUT: time, generation, events, inconsistent rows, or the error.
"""

from __future__ import annotations

import json
import sys
import time

import duckdb

from support.lake import analyst

CHECK = """
SELECT (SELECT max(generation) FROM _shipsync_publication),
       (SELECT count(*) FROM webhook_events),
       (SELECT count(*) FROM webhook_events e WHERE NOT EXISTS
            (SELECT 1 FROM webhook_event_resources r WHERE r.notification_id = e.notification_id))
     + (SELECT count(*) FROM webhook_event_resources r WHERE NOT EXISTS
            (SELECT 1 FROM webhook_events e WHERE e.notification_id = r.notification_id)),
       (SELECT count(*) FROM container_milestones),
       (SELECT count(*) FROM documents)
"""


def observe(con: duckdb.DuckDBPyConnection, opened: float) -> dict[str, object]:
    generation, events, inconsistent, milestones, documents = con.execute(CHECK).fetchone() or (None,) * 5
    return {
        "at": time.time(),
        "opened": opened,
        "generation": generation,
        "events": events,
        "inconsistent": inconsistent,
        "milestones": milestones,
        "documents": documents,
    }


def main() -> None:
    mode, warehouse, out, seconds, interval = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5])
    deadline = time.time() + seconds
    held = analyst(warehouse) if mode == "hold" else None
    held_at = time.time()
    with open(out, "a") as lines:
        print("ready", flush=True)
        while time.time() < deadline:
            started = time.time()
            try:
                if held is not None:
                    row = observe(held, held_at)
                else:
                    con = analyst(warehouse)
                    try:
                        row = observe(con, started)
                    finally:
                        con.close()
                row["seconds"] = time.time() - started
            except Exception as exc:  # every failure is what the test counts
                row = {"at": time.time(), "error": f"{type(exc).__name__}: {exc}"}
            lines.write(json.dumps(row) + "\n")
            lines.flush()
            time.sleep(max(0.0, interval - (time.time() - started)))


if __name__ == "__main__":
    main()
