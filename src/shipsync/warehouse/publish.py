"""Publishing: the pipeline's file becomes a new state analysts can open, after each run that changed it.

Steps, under one lock per warehouse (one publisher at a time):
1. Skip at once when the pipeline's file is unchanged since the last state (size, mtime, WAL).
2. Open the pipeline's file read-only (writers of other processes wait, as for any writer) and,
   in one read transaction, write what changed as new Parquet files (`snapshot`); close it.
3. Write the state's manifest and catalog (`catalog`), then rename the catalog over the analysts'
   file. A crash before the rename leaves the previous state in place; files it wrote are removed
   later, as nothing names them.
4. Copy the state to the other targets (shared folders: `targets`), with the file closed.
5. Remove the states nobody can still be using (`retention`).
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

from shipsync.warehouse import layout
from shipsync.warehouse.catalog import install, table_views, write_catalog, write_json
from shipsync.warehouse.publishing import PublishOptions, options_for
from shipsync.warehouse.retention import collect, read_manifest, state_files
from shipsync.warehouse.snapshot import Exporter, Manifest, changed, export_tables, view_sql

log = logging.getLogger(__name__)


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


def newest_state(root: Path) -> Manifest | None:
    states = state_files(root)
    return read_manifest(states[-1][1]) if states else None


def _current(analysts: Path, root: Path, manifest: Manifest | None) -> bool:
    if manifest is None or not analysts.exists():
        return False
    state = root / "states" / f"g{manifest['generation']:08d}.duckdb"
    return state.exists() and os.path.samefile(analysts, state)


def publish(warehouse: Path, *, force: bool = False) -> PublishReport:
    """Publish the pipeline's file of `warehouse` if it changed since the last state."""
    started = time.perf_counter()
    analysts, own, root = layout.analysts_file(warehouse), layout.pipeline_file(warehouse), layout.publication_dir(warehouse)
    options = options_for(warehouse)
    report = PublishReport()
    with publisher_lock(warehouse):
        if not own.exists():
            return report
        before = newest_state(root)
        if not force and before and before.get("source") == source_signature(own) and _current(analysts, root, before):
            return report
        generation = (before["generation"] if before else 0) + 1
        (root / "states").mkdir(parents=True, exist_ok=True)
        exporter, manifest = _export(own, root, generation, before if _current(analysts, root, before) else None, options)
        report.timings["export"] = time.perf_counter() - started
        report.rows_written = exporter.written
        if manifest is None:  # the file was written, but no table or view differs
            return report
        state = root / "states" / f"g{generation:08d}.duckdb"
        write_json(state.with_suffix(".json"), manifest)
        write_catalog(state, table_views(manifest["tables"], lambda p: str((root / p).absolute())), manifest, manifest["views"])
        install(state, analysts)
        write_json(root / "current.json", {**manifest, "root": str(root.absolute())})
        report.timings["catalog"] = time.perf_counter() - started - report.timings["export"]
        report.generation, report.files = generation, sum(len(t["files"]) for t in manifest["tables"].values())
        collect(root, [analysts])
    if options.targets:
        from shipsync.warehouse.targets import mirror

        mark = time.perf_counter()
        for target in options.targets:
            mirror(root, manifest, target, options.account or analysts.stem)
        report.timings["targets"] = time.perf_counter() - mark
    report.seconds = time.perf_counter() - started
    log.info("published state %s of %s in %.3f s (%s rows written)", generation, analysts, report.seconds, report.rows_written)
    return report


def _export(own: Path, root: Path, generation: int, before: Manifest | None, options: PublishOptions) -> tuple[Exporter, Manifest | None]:
    from shipsync.warehouse.connection import connect
    from shipsync.warehouse.migrate import recorded_version

    with connect(own, read_only=True, migrate=False) as con:
        signature = source_signature(own)  # nobody writes while we hold the file
        con.execute("BEGIN TRANSACTION")
        exporter = Exporter(con, root, generation)
        tables = export_tables(exporter, before)
        views = view_sql(con)
        schema_version = recorded_version(con)
        con.execute("COMMIT")
    if before is not None and not changed(before, tables, views):
        write_json(root / "states" / f"g{before['generation']:08d}.json", {**before, "source": signature})
        return exporter, None
    now = datetime.now(UTC).isoformat()
    manifest: Manifest = {
        "format": 1,
        "generation": generation,
        "published_at": now,
        "account": options.account,
        "schema_version": schema_version,
        "source": signature,
        "source_changed_at": datetime.fromtimestamp(signature["mtime_ns"] / 1e9, UTC).isoformat(),
        "tables": tables,
        "views": views,
    }
    return exporter, manifest
