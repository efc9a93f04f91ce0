"""An analyst as a separate process: `python analyst.py hold|poll WAREHOUSE OUT SECONDS INTERVAL`.

The analyst opens the lake as any DuckDB would, with the statements `shipsync sql --print-attach`
prints, on a DuckDB connection of its own (not shipsync's). `hold` keeps one read-only connection
with one transaction open for the whole time (it keeps the snapshot it started from, as a long
notebook query does) and queries it every INTERVAL seconds; `poll` opens, queries and closes every
INTERVAL seconds. Each query checks that every notification has all of its resources and no
resource lacks its notification, and reports the snapshot it read. One JSON line per query to OUT:
time, snapshot, events, inconsistent rows, or the error. It queries until the file OUT.stop exists
(`stop`), or for SECONDS at most. `wait_for_observations` waits for what it has written.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import duckdb

CHECK = """
SELECT (SELECT id FROM ducklake_current_snapshot('shipsync')),
       (SELECT count(*) FROM webhook_events),
       (SELECT count(*) FROM webhook_events e WHERE NOT EXISTS
            (SELECT 1 FROM webhook_event_resources r WHERE r.notification_id = e.notification_id))
     + (SELECT count(*) FROM webhook_event_resources r WHERE NOT EXISTS
            (SELECT 1 FROM webhook_events e WHERE e.notification_id = r.notification_id)),
       (SELECT count(*) FROM container_milestones),
       (SELECT count(*) FROM documents)
"""


def attach_statements(warehouse: str) -> str:
    """What `shipsync sql --print-attach` prints for this warehouse (the command itself, run once)."""
    done = subprocess.run(
        [sys.executable, "-m", "shipsync", "sql", "--print-attach"],
        env={"SHIPSYNC_WAREHOUSE": warehouse, "PATH": "", "HOME": "/nonexistent-home-for-an-analyst"},
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def open_lake(statements: str) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute(statements)
    return con


def observe(con: duckdb.DuckDBPyConnection, opened: float) -> dict[str, object]:
    snapshot, events, inconsistent, milestones, documents = con.execute(CHECK).fetchone() or (None,) * 5
    return {
        "at": time.time(),
        "opened": opened,
        "snapshot": snapshot,
        "events": events,
        "inconsistent": inconsistent,
        "milestones": milestones,
        "documents": documents,
    }


def stop_file(out: str | Path) -> Path:
    return Path(f"{out}.stop")


def observations(out: Path) -> list[dict[str, object]]:
    """What the analyst has written to OUT so far (whole lines only)."""
    text = out.read_text() if out.exists() else ""
    return [json.loads(line) for line in text.splitlines(keepends=True) if line.endswith("\n") and line.strip()]


def wait_for_observations(
    out: Path, process: subprocess.Popen[str], at_least: int, after: float = 0.0, hang_s: float = 600
) -> list[dict[str, object]]:
    """Every observation in OUT once at least `at_least` were made after the time `after` (a wall
    clock reading). The bound is a hang guard only: an analyst makes one in well under a second."""
    deadline = time.monotonic() + hang_s
    while True:
        seen = observations(out)
        if sum(1 for o in seen if float(o["at"]) > after) >= at_least:  # type: ignore[arg-type]
            return seen
        assert process.poll() is None, f"the analyst ended after {len(seen)} observations"
        assert time.monotonic() < deadline, f"hang guard: the analyst made {len(seen)} observations in {hang_s:.0f} s"
        time.sleep(0.1)


def main() -> None:
    mode, warehouse, out, seconds, interval = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5])
    statements = attach_statements(warehouse)
    deadline = time.time() + seconds
    held = open_lake(statements) if mode == "hold" else None
    held_at = time.time()
    if held is not None:
        held.execute("BEGIN TRANSACTION")
    with open(out, "a") as lines:
        print("ready", flush=True)
        while time.time() < deadline and not stop_file(out).exists():
            started = time.time()
            try:
                if held is not None:
                    row = observe(held, held_at)
                else:
                    con = open_lake(statements)
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
