"""Where a run keeps the rows it will write until it commits: Parquet files in a private temporary
folder (0700), one file per staged batch, read back by DuckDB's `read_parquet` at commit.

On disk rather than in memory, so that a run's memory follows its batch, not its pull: a backfill
or a receiver's backlog staged in memory grows with everything it read. Batches of rows are written
by Arrow without a DuckDB statement, so that staging a batch costs no catalog round trip (every
statement on a connection with the lake attached reads the lake's catalog); the rows a deferred
write reads (`Warehouse.stage`) by DuckDB's COPY on the run's staging
connection (`copy_to_file`), cast to the lake's types as they are kept. The files stay until the
run is done with them: a commit that lost a race replays from them. The folder is removed when the
run's warehouse closes, whatever happened; a process killed mid-run (kill -9, out of memory) leaves
its folders behind, and the next run that stages anything removes them (`sweep_orphans`): every
private temporary folder shipsync makes is named by its kind and its process id (`folder_prefix`)."""

from __future__ import annotations

import itertools
import logging
import os
import re
import shutil
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from shipsync.warehouse.identifiers import literal

log = logging.getLogger(__name__)

_OWN_FOLDER = re.compile(r"shipsync-[a-z]+-(\d+)-")
# A folder untouched for this long whose process is gone is a leftover. The age guards against a
# process id seen from another PID namespace sharing the folder (a container's).
ORPHAN_AGE_S = 600.0


def folder_prefix(kind: str) -> str:
    """How a private temporary folder of this process is named: its kind and the process id."""
    return f"shipsync-{kind}-{os.getpid()}-"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def sweep_orphans(now: float | None = None) -> list[Path]:
    """Remove this user's shipsync temporary folders (`folder_prefix`) whose process is gone and
    which nobody touched for `ORPHAN_AGE_S`; the folders removed."""
    moment = time.time() if now is None else now
    removed = []
    with os.scandir(tempfile.gettempdir()) as entries:
        for entry in entries:
            named = _OWN_FOLDER.match(entry.name)
            if named is None or not entry.is_dir(follow_symlinks=False):
                continue
            try:
                found = entry.stat(follow_symlinks=False)
            except OSError:  # most often: its run removed it since the listing, as runs do when they end
                continue
            if found.st_uid != os.getuid() or moment - found.st_mtime < ORPHAN_AGE_S or _alive(int(named[1])):
                continue
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(Path(entry.path))
    if removed:
        log.info("removed %d temporary folders of shipsync processes that ended without removing them", len(removed))
    return removed


def parquet_relation(files: Sequence[Path], *, union_by_name: bool = False) -> str:
    """SQL for the rows of `files` (all of one schema, or with `union_by_name` columns matched by
    name, a column a file lacks read as NULL), usable wherever a table name is."""
    by_name = ", union_by_name => true" if union_by_name else ""
    return f"read_parquet([{', '.join(literal(str(f)) for f in files)}]{by_name})"


def copy_to_file(con: duckdb.DuckDBPyConnection, select: str, path: Path) -> str:
    """The rows of `select` written by DuckDB to the Parquet file `path`; the relation to read them
    by. A file rather than a temporary table wherever the rows outlive a statement inside a write
    transaction: a table dropped inside a transaction keeps its memory until the transaction ends.
    Uncompressed: the files live for one run, and writing them is on its critical path. A query that
    fails leaves no file."""
    try:
        con.execute(f"COPY ({select}) TO {literal(str(path))} (FORMAT parquet, COMPRESSION uncompressed)")
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    return parquet_relation([path])


@dataclass
class StagedRows:
    """The batches of one staged write (all of one schema): later batches may join it."""

    schema: pa.Schema
    files: list[Path] = field(default_factory=list)

    @property
    def relation(self) -> str:
        return parquet_relation(self.files)


class StagedFiles:
    """A run's folder of staged batches, created at the first batch."""

    def __init__(self) -> None:
        self._folder: Path | None = None
        self._names = itertools.count(1)

    def new_path(self, label: str) -> Path:
        """The path of a new file of the folder, for a batch written by another writer (DuckDB)."""
        if self._folder is None:
            sweep_orphans()
            self._folder = Path(tempfile.mkdtemp(prefix=folder_prefix("stage")))
        return self._folder / f"{next(self._names):06d}-{label}.parquet"

    def write(self, label: str, batch: pa.Table) -> Path:
        """Keep `batch` in a new file of the folder; its path."""
        path = self.new_path(label)
        # Uncompressed: the files live for one run, and writing them is on the run's critical path.
        pq.write_table(batch, path, compression="none")
        return path

    def rows(self, label: str, batch: pa.Table) -> StagedRows:
        """`batch` kept as the first batch of a staged write."""
        return StagedRows(batch.schema, [self.write(label, batch)])

    def clear(self) -> None:
        """Remove the folder and every file in it (a later batch starts a new one)."""
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None
