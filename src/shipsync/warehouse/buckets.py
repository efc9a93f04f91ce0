"""Tables published as buckets: rows grouped by the slot of their key (`changes.slot_sql`), a
bucket being the slots equal modulo the table's bucket count (a power of two), one file each.

A change touches the buckets of its slots only, so a one-minute load that refreshes ten containers
writes at most ten small files, however large the table. Buckets hold about `BUCKET_ROWS` rows:
small enough that rewriting one is cheap, few enough that a reader opens a handful of files per
table. The count changes (and the table is written whole) only when the table grows or shrinks
fourfold. Every bucket a table writes comes out of one pass (`Exporter.copy_partitioned`).

Where the log cannot say which rows changed (`ANY_ROW`), each bucket is fingerprinted by its row
count and the XOR of its rows' hashes, and the buckets whose fingerprint moved are written.
"""

from __future__ import annotations

from typing import Any

from shipsync.warehouse.changes import SLOTS, TableChanges, q, slot_sql
from shipsync.warehouse.snapshot import Exporter, TableState, empty_state

BUCKET_ROWS = 4096

Fingerprints = dict[int, tuple[int, int]]  # bucket -> (rows, XOR of row hashes)


def bucket_count(rows: int, before: TableState | None, definition: str) -> int:
    kept = int(before.get("buckets") or 0) if before and before.get("definition") == definition else 0
    if (kept and kept * BUCKET_ROWS // 4 <= rows <= kept * BUCKET_ROWS * 4) or (kept == 1 and rows <= BUCKET_ROWS * 4):
        return kept
    wanted = max(1, -(-rows // BUCKET_ROWS))
    return min(SLOTS, 1 << (wanted - 1).bit_length())


def part_sql(table: str, buckets: int) -> str:
    return f"({slot_sql(table)} % {buckets})"


def _fingerprints(exporter: Exporter, buckets: dict[str, int]) -> dict[str, Fingerprints]:
    found: dict[str, Fingerprints] = {t: {} for t in buckets}
    fingerprint = "SELECT '{t}', {b} AS b, count(*), bit_xor(hash(_row)) FROM {q} AS _row GROUP BY b"
    parts = [fingerprint.format(t=t, b=part_sql(t, n), q=q(t)) for t, n in buckets.items()]
    if parts:
        for t, b, n, h in exporter.con.execute(" UNION ALL ".join(parts)).fetchall():
            found[str(t)][int(b)] = (int(n), int(h))
    return found


def _known(exporter: Exporter, table: str, before: TableState, buckets: set[int]) -> Fingerprints:
    """The previous state's fingerprints of `buckets`; those it lacks (buckets written because the
    log named them) are read from their files, which costs less than writing them again."""
    known = {int(b): (int(v[0]), int(v[1])) for b, v in (before.get("fingerprints") or {}).items()}
    files: dict[int, list[str]] = {}
    for f in before["files"]:
        if f.get("bucket") in buckets and f["bucket"] not in known:
            files.setdefault(int(f["bucket"]), []).append("'" + str(exporter.root / f["path"]).replace("'", "''") + "'")
    parts = [f"SELECT {b}, count(*), bit_xor(hash(_row)) FROM read_parquet([{', '.join(paths)}]) AS _row" for b, paths in files.items()]
    if parts:
        for b, n, h in exporter.con.execute(" UNION ALL ".join(parts)).fetchall():
            known[int(b)] = (int(n), int(h) if h is not None else 0)
    return known


def _write(exporter: Exporter, table: str, buckets: int, only: set[int] | None) -> dict[int, tuple[str, int]]:
    where = f" WHERE {part_sql(table, buckets)} IN ({', '.join(map(str, sorted(only)))})" if only is not None else ""
    if only is not None and not only:
        return {}
    query = f"SELECT _row.*, {part_sql(table, buckets)} AS _part FROM {q(table)} AS _row{where}"
    return exporter.copy_partitioned(table, query, f"of{buckets}-b")


def export_hashed(
    exporter: Exporter,
    todo: dict[str, TableChanges | None],
    previous: dict[str, TableState],
    definitions: dict[str, str],
    sizes: dict[str, tuple[int, int]],
) -> dict[str, TableState]:
    """The new state of each table in `todo` (its logged changes, or None: write it whole)."""
    counts = {t: bucket_count(sizes[t][0], previous.get(t), definitions[t]) for t in todo}
    rewrite: dict[str, set[int] | None] = {}  # None: every bucket
    to_fingerprint: dict[str, int] = {}
    for table, written in todo.items():
        old = previous.get(table)
        if written is None or old is None or old.get("buckets") != counts[table] or sizes[table][0] == 0:
            rewrite[table] = None
        elif written.any_row:
            to_fingerprint[table] = counts[table]
        else:
            rewrite[table] = {slot % counts[table] for slot in written.slots}
    found = _fingerprints(exporter, to_fingerprint)
    for table, now in found.items():
        known = _known(exporter, table, previous[table], set(now))
        previous[table] = {**previous[table], "fingerprints": {str(b): list(v) for b, v in known.items()}}
        rewrite[table] = {b for b, fingerprint in now.items() if known.get(b) != fingerprint}
    states: dict[str, TableState] = {}
    for table, buckets in rewrite.items():
        if sizes[table][0] == 0:
            states[table] = {**empty_state(exporter, table, definitions[table], previous.get(table)), "buckets": counts[table]}
            continue
        old = previous.get(table) if buckets is not None else None
        prints = found.get(table)
        new = _write(exporter, table, counts[table], buckets)
        files: list[dict[str, Any]] = []
        fingerprints: dict[str, list[int]] = {}
        for f in (old or {}).get("files", []):
            bucket = f.get("bucket")
            still_there = prints is None or bucket in prints  # a fingerprinted bucket that is gone is empty now
            if bucket is not None and bucket not in new and buckets is not None and bucket not in buckets and still_there:
                files.append(f)
                if str(bucket) in (old or {}).get("fingerprints", {}):
                    fingerprints[str(bucket)] = old["fingerprints"][str(bucket)]  # type: ignore[index]
        for bucket, (path, rows) in sorted(new.items()):
            files.append({"path": path, "rows": rows, "bucket": bucket})
            if prints is not None and bucket in prints:
                fingerprints[str(bucket)] = list(prints[bucket])
        files.sort(key=lambda f: int(f["bucket"]))
        states[table] = {
            "definition": definitions[table],
            "rows": sum(int(f["rows"]) for f in files),
            "files": files or empty_state(exporter, table, definitions[table], None)["files"],
            "buckets": counts[table],
            "fingerprints": fingerprints,
        }
    return states
