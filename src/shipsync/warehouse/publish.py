"""Publishing: the pipeline's file becomes a new state analysts can open, after each run that changed it.

Steps, under one lock per warehouse (one publisher at a time), on a connection to the pipeline's
file: the writer's own when a command's only write ends (`events load`: the file is open and
locked already, so nothing is opened twice), otherwise one opened for it.
1. In one read transaction: read the change log past the last state's position (`changes`); if
   nothing was written and no column or view changed, stop. Otherwise write what changed as new
   Parquet files (`snapshot`, `buckets`).
2. Write the state's manifest and catalog (`catalog`, attached to the same connection), then
   rename the catalog over the analysts' file. A crash before the rename leaves the previous state
   in place; files it wrote are removed later, as nothing names them.
3. Drop the log entries the state covers; remove the states nobody can still be using (`retention`).
4. Copy the state to the other targets (shared folders: `targets`).
"""

from __future__ import annotations

import fcntl
import logging
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import orjson

from shipsync.warehouse import layout
from shipsync.warehouse.catalog import Locate, install, table_views, write_catalog, write_json
from shipsync.warehouse.changes import Changes, forget, published_mark, read_changes
from shipsync.warehouse.publishing import PublishOptions, options_for
from shipsync.warehouse.retention import collect, read_manifest, state_files
from shipsync.warehouse.snapshot import Exporter, Manifest, changed, definitions, export_tables, verify_state

log = logging.getLogger(__name__)
FORMAT = 2


@dataclass
class PublishReport:
    generation: int | None = None  # None: nothing had changed
    seconds: float = 0.0
    rows_written: int = 0
    files: int = 0
    timings: dict[str, float] = field(default_factory=dict)


@contextmanager
def publisher_lock(warehouse: Path) -> Iterator[None]:
    path = layout.publish_lock(warehouse)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def source_signature(own: Path) -> dict[str, int]:
    info = own.stat()
    wal = own.with_name(own.name + ".wal")
    return {"mtime_ns": info.st_mtime_ns, "size": info.st_size, "wal": wal.stat().st_size if wal.exists() else -1}


def record_source(warehouse: Path) -> None:
    """After the publishing connection closed: the pipeline file as the newest state saw it, so
    that `status` can tell whether anything was written since (without opening the file)."""
    own, root = layout.pipeline_file(warehouse), layout.publication_dir(warehouse)
    if own.exists() and root.exists():
        staging = root / f".source.json.{os.getpid()}.new"
        staging.write_bytes(orjson.dumps(source_signature(own)))
        os.replace(staging, root / "source.json")


def newest_state(root: Path) -> Manifest | None:
    states = state_files(root)
    return read_manifest(states[-1][1]) if states else None


def _current(analysts: Path, root: Path, manifest: Manifest | None) -> bool:
    if manifest is None or not analysts.exists() or manifest.get("format") != FORMAT:
        return False
    state = root / "states" / f"g{manifest['generation']:08d}.duckdb"
    return state.exists() and os.path.samefile(analysts, state)


def _verifying() -> bool:
    return os.environ.get("SHIPSYNC_PUBLISH_VERIFY", "") not in ("", "0")


def publish(warehouse: Path, *, force: bool = False, con: duckdb.DuckDBPyConnection | None = None) -> PublishReport:
    """Publish what the pipeline's file of `warehouse` holds, if it changed since the last state:
    on `con` (a read-write connection to it, outside any transaction) or on one opened here.
    `force` fingerprints every table instead of trusting the change log."""
    if con is None:
        from shipsync.warehouse.connection import open_pipeline

        if not layout.pipeline_file(warehouse).exists():
            return PublishReport()
        with open_pipeline(warehouse) as own:
            report = publish(warehouse, force=force, con=own)
        record_source(warehouse)
        return report
    started = time.perf_counter()
    analysts, root = layout.analysts_file(warehouse), layout.publication_dir(warehouse)
    options = options_for(warehouse)
    report = PublishReport()
    with publisher_lock(warehouse):
        newest = newest_state(root)
        before = newest if _current(analysts, root, newest) else None
        generation = (newest["generation"] if newest else 0) + 1
        con.execute("SET enable_progress_bar = false")  # a long COPY would draw one on the command's output
        con.execute("BEGIN TRANSACTION")
        try:
            manifest, exporter = _export(con, root, generation, before, options, force)
        finally:
            con.execute("COMMIT")
        report.timings["export"] = time.perf_counter() - started
        report.rows_written = exporter.written if exporter else 0
        if manifest is None or (before is not None and not changed(before, manifest["tables"], manifest["views"])):
            if before is not None and manifest is not None:  # written, but to the same content
                write_json(root / "states" / f"g{before['generation']:08d}.json", {**before, "changes_seq": manifest["changes_seq"]})
                forget(con, manifest["changes_seq"], before["generation"])
            report.seconds = time.perf_counter() - started
            return report
        mark = time.perf_counter()
        state = root / "states" / f"g{generation:08d}.duckdb"
        write_json(state.with_suffix(".json"), manifest)
        locate = _locator(root)
        write_catalog(con, state, table_views(manifest["tables"], locate), manifest, manifest["views"], _reusable(root, before, manifest))
        install(state, analysts)
        write_json(root / "current.json", {**manifest, "root": str(root.absolute())})
        report.timings["catalog"] = time.perf_counter() - mark
        forget(con, manifest["changes_seq"], generation)
        report.generation, report.files = generation, sum(len(t["files"]) for t in manifest["tables"].values())
        mark = time.perf_counter()
        collect(root, [analysts])
        report.timings["retention"] = time.perf_counter() - mark
    if options.targets:
        from shipsync.warehouse.targets import mirror

        mark = time.perf_counter()
        for target in options.targets:
            mirror(con, root, manifest, target, options.account or analysts.stem)
        report.timings["targets"] = time.perf_counter() - mark
    report.seconds = time.perf_counter() - started
    log.info("published state %s of %s in %.3f s (%s rows written)", generation, analysts, report.seconds, report.rows_written)
    return report


def _locator(root: Path) -> Locate:
    base = root.absolute()
    return lambda relative: str(base / relative)


def _reusable(root: Path, before: Manifest | None, manifest: Manifest) -> tuple[Path, dict[str, str]] | None:
    """The previous catalog, if the new one differs from it in table files only."""
    if before is None or before["views"] != manifest["views"]:
        return None
    if {t: s["definition"] for t, s in before["tables"].items()} != {t: s["definition"] for t, s in manifest["tables"].items()}:
        return None
    return root / "states" / f"g{before['generation']:08d}.duckdb", table_views(before["tables"], _locator(root))


def hash_probe(con: duckdb.DuckDBPyConnection) -> str:
    """DuckDB's version and its hash of a fixed value: bucket files written under another hash
    function would not line up with the slots the log names, so a change here rewrites them all."""
    row = con.execute("SELECT version() || ':' || hash('shipsync', 42)::VARCHAR").fetchone()
    return str(row[0]) if row else ""


def _export(
    con: duckdb.DuckDBPyConnection, root: Path, generation: int, before: Manifest | None, options: PublishOptions, force: bool
) -> tuple[Manifest | None, Exporter | None]:
    from shipsync.warehouse.migrate import recorded_version

    probe = hash_probe(con)
    if before is not None and before.get("probe") != probe:
        before = None
    # The log counts from the newest state only if this file's log was published as that state;
    # otherwise it is read whole, for its position, and every table is looked at.
    trusted = before is not None and published_mark(con) == (before["generation"], before["changes_seq"])
    changes = read_changes(con, int(before["changes_seq"]) if before is not None and trusted else 0)
    if force or not trusted:
        changes = Changes(position=changes.position, everything=True)
    tables_sql, views = definitions(con)
    same_shape = before is not None and views == before["views"] and tables_sql == {t: s["definition"] for t, s in before["tables"].items()}
    if same_shape and changes.empty:
        return None, None
    (root / "states").mkdir(parents=True, exist_ok=True)
    exporter = Exporter(con, root, generation)
    tables = export_tables(exporter, before, changes, tables_sql)
    if _verifying():
        verify_state(con, root, tables)
    now = datetime.now(UTC).isoformat()
    manifest: Manifest = {
        "format": FORMAT,
        "generation": generation,
        "published_at": now,
        "account": options.account,
        "schema_version": recorded_version(con),
        "source_changed_at": now,  # the state holds every write committed before it was taken
        "changes_seq": changes.position,
        "probe": probe,
        "tables": tables,
        "views": views,
    }
    return manifest, exporter
