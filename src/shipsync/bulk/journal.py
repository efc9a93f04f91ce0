"""A bulk run's write journal: what each write is about to change, on disk before it is sent.

A run commits its results and before-images (`bulk_undo`) to the lake once, when it ends, and
never while a write is on its way (no network call inside the lake's write transaction). A run
killed before that commit would leave the service changed and nothing to undo it by, so every
undoable run keeps a journal beside the lake: one private file (0600, in a 0700 folder, created
exclusively through `safe_files`) of JSON lines. Its first line names the run; then, before a
chunk of writes is sent, one line per write with its before- and after-image (fsync'd before the
first of them is sent); after the chunk, one line per write with its outcome. The run holds an
exclusive `flock` on its journal while it lives (it is made under a name no fold looks at, and
named once it is locked and its first line is on disk), and removes the journal once its commit
holds the same before-images.

The next bulk run or undo on this host folds every journal nobody holds into its own commit
(`recover`): the dead run's before-images become `bulk_undo` rows (a write whose outcome never got
written is kept too: undo checks the service before it puts anything back), its outcomes
`bulk_results` rows, and a failed `sync_runs` row says what happened. A journal whose run did
commit (killed between its commit and the removal) is only removed. The folding run holds the
journals' locks until its own commit holds their rows, so two runs never fold one journal twice.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
from collections.abc import Iterator, Sequence
from dataclasses import MISSING, dataclass, field, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar, get_args

from shipsync.bulk.model import Change, Status, apply_flow
from shipsync.bulk.record import store_recovered
from shipsync.config import Settings
from shipsync.json_text import dumps, read_strict
from shipsync.redaction import redact
from shipsync.safe_files import create_exclusive, private_folder, sync_folder, write_all
from shipsync.warehouse.ledger import RunRecord, WarehouseRun

R = TypeVar("R")
log = logging.getLogger("shipsync.bulk")
FOLDER_NAME = "bulk-journal"
SUFFIX = ".journal"
# A write sent whose outcome line never got written: it may or may not have happened.
UNSETTLED = "the run stopped while this write was being sent: it may or may not have happened (undo checks the service first)"


def journal_folder(settings: Settings) -> Path:
    """`bulk-journal/` in the embedded lake's folder; beyond one host (no lake folder), in the
    state folder: a journal belongs to the host whose run wrote it."""
    folder = settings.lake.folder
    return folder / FOLDER_NAME if folder is not None else settings.state_dir / FOLDER_NAME


@dataclass(frozen=True)
class JournalHeader:
    """The run a journal belongs to, as its first line says."""

    run_id: str
    kind: str
    file: str | None
    sheet: str | None
    parameters: dict[str, Any]
    started_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat())


def _image(change: Change) -> dict[str, Any]:
    return {
        "row": change.row,
        "entity_type": change.entity_type,
        "entity_id": change.entity_id,
        "field": change.field,
        "action": change.action,
        "resource_id": change.resource_id,
        "before": change.before,
        "after": change.after,
    }


class WriteJournal:
    """One live run's journal (see the module's docstring), locked while the run holds it."""

    def __init__(self, folder: Path, header: JournalHeader) -> None:
        private_folder(folder)
        self.path = folder / f"{header.run_id}{SUFFIX}"
        # Made whole under a name no fold looks at, then named: a journal a fold can see is locked
        # by its run and has its first line.
        making = folder / f".{header.run_id}{SUFFIX}.new"
        self._fd = create_exclusive(making)
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        self._seq: dict[int, int] = {}  # id(change) -> its line's number
        self._append([{"run": header.__dict__}])
        os.rename(making, self.path)
        sync_folder(folder)

    def _append(self, lines: Sequence[dict[str, Any]]) -> None:
        write_all(self._fd, "".join(dumps(line) + "\n" for line in lines).encode("utf-8"))
        os.fsync(self._fd)

    def intend(self, changes: Sequence[Change]) -> None:
        """Record what `changes` are about to change; on disk when this returns, before any is sent."""
        lines = []
        for change in changes:
            seq = self._seq[id(change)] = len(self._seq)
            lines.append({"seq": seq, "intent": _image(change)})
        self._append(lines)

    def settle(self, changes: Sequence[Change]) -> None:
        """Record how `changes` ended (applied, failed or unknown), with what they changed as sent."""
        self._append([{"seq": self._seq[id(c)], "status": c.status, "detail": c.detail, "image": _image(c)} for c in changes])

    def remove(self) -> None:
        """The run's commit holds what the journal held: it goes."""
        self.path.unlink(missing_ok=True)
        sync_folder(self.path.parent)

    def close(self) -> None:
        """Let go of the journal (and its lock): kept, unless `remove`d, for the next run to fold."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


@dataclass
class RecoveredRun:
    """A run that stopped before its commit, as its journal tells it: its changes as far as they got."""

    header: JournalHeader
    changes: list[Change]
    path: Path

    @property
    def writes(self) -> int:
        return sum(1 for c in self.changes if c.status in ("applied", "unknown"))


@dataclass
class Recovered:
    """Journals this run folds (their locks held until its commit holds their rows), and those of
    runs that did commit (only to be removed)."""

    runs: list[RecoveredRun] = field(default_factory=list)
    ledger: list[RunRecord] = field(default_factory=list)  # for the runs the ledger has no row of: the folding run adds them
    _held: list[tuple[int, Path]] = field(default_factory=list)

    def remove(self) -> None:
        """This run committed what the journals held: they go."""
        for _, path in self._held:
            path.unlink(missing_ok=True)
        if self._held:
            sync_folder(self._held[0][1].parent)

    def close(self) -> None:
        for fd, _ in self._held:
            os.close(fd)
        self._held.clear()


def _locked(path: Path) -> int | None:
    """A descriptor of the journal at `path`, exclusively locked; None when its run still holds it
    (or it went meanwhile: folded and removed by another run)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        named = os.stat(path, follow_symlinks=False)
        held = os.fstat(fd)
        if (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino):
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def _lines(fd: int) -> Iterator[dict[str, Any]]:
    """The journal's whole lines (a line cut short by a kill is the last one, and is dropped)."""
    with os.fdopen(os.dup(fd), "rb") as journal:
        for raw in journal:
            if not raw.endswith(b"\n"):
                return
            with contextlib.suppress(ValueError):
                line = read_strict(raw)
                if isinstance(line, dict):
                    yield line


class ForeignJournalError(ValueError):
    """A journal line of a shape this version of shipsync does not write."""


def _record_of(cls: type[R], value: object, **more: Any) -> R:
    """`cls(**value, **more)` when `value` holds exactly fields of `cls` (those with a default may be
    absent); else `ForeignJournalError`."""
    if not isinstance(value, dict) or not all(isinstance(name, str) for name in value):
        raise ForeignJournalError(f"not an object of {cls.__name__}'s members")
    known = {f.name for f in fields(cls)} - set(more)  # type: ignore[arg-type]
    required = {f.name for f in fields(cls) if f.default is MISSING and f.default_factory is MISSING} - set(more)  # type: ignore[arg-type]
    if not set(value) <= known or not required <= set(value):
        raise ForeignJournalError(f"members {sorted(value)} are not {cls.__name__}'s")
    return cls(**value, **more)


def read_journal(path: Path, fd: int) -> RecoveredRun | None:
    """The run a journal describes: each intended write as a Change, its status as its outcome
    line says (`unknown` when it has none); None for a journal that cannot be read as one (no
    first line, or lines of another shape: left for a person to look at, never guessed at)."""
    header: JournalHeader | None = None
    changes: dict[int, Change] = {}
    try:
        for line in _lines(fd):
            seq = line.get("seq")
            if "run" in line and header is None:
                header = _record_of(JournalHeader, line["run"])
            elif "intent" in line:
                if not isinstance(seq, int):
                    raise ForeignJournalError("a write without its sequence number")
                changes[seq] = _record_of(Change, line["intent"], status="unknown", detail=UNSETTLED)
            elif "status" in line and seq in changes:
                if line["status"] not in get_args(Status):
                    raise ForeignJournalError(f"an outcome of no status shipsync writes: {line['status']!r}")
                changes[seq] = _record_of(Change, line.get("image"), status=line["status"], detail=str(line.get("detail") or ""))
    except ForeignJournalError:
        log.warning("%s: not a journal this version of shipsync reads; left as it is", path)
        return None
    if header is None:
        return None
    return RecoveredRun(header, [changes[seq] for seq in sorted(changes)], path)


def _committed(run: WarehouseRun, run_id: str) -> tuple[bool, bool]:
    """Whether the run's results are in the lake, and whether its ledger row is."""
    results = run.con.execute("SELECT count(*) FROM bulk_results WHERE run_id = ?", [run_id]).fetchone()
    ledger = run.con.execute("SELECT count(*) FROM sync_runs WHERE run_id = ?", [run_id]).fetchone()
    return bool(results and results[0]), bool(ledger and ledger[0])


def recover(run: WarehouseRun, folder: Path) -> Recovered:
    """Fold every journal in `folder` that no live run holds into `run`: its results and
    before-images are staged, and `Recovered.ledger` has the rows that say they stopped (for the
    run to add once its first step began). Journals of runs that did commit are only removed. Call
    `Recovered.remove` after `run` commits, `close` in any case."""
    recovered = Recovered()
    if not folder.is_dir():
        return recovered
    for path in folder.glob(f".*{SUFFIX}.new"):  # a run that died while making its journal sent nothing
        if (fd := _locked(path)) is not None:
            path.unlink(missing_ok=True)
            os.close(fd)
    for path in sorted(folder.glob(f"*{SUFFIX}")):
        fd = _locked(path)
        if fd is None:
            continue
        dead = read_journal(path, fd)
        if dead is None:  # no first line it could be told by (a journal always has one): left as it is
            os.close(fd)
            continue
        recovered._held.append((fd, path))
        has_results, has_ledger = _committed(run, dead.header.run_id)
        if has_results:
            continue  # its commit holds it all
        header = dead.header
        store_recovered(run.warehouse, header.run_id, header.kind, (header.file, header.sheet), dead.changes)
        recovered.runs.append(dead)
        if not has_ledger:
            recovered.ledger.append(_ledger_record(dead, run.run_id))
    return recovered


def _ledger_record(dead: RecoveredRun, by: str) -> RunRecord:
    header = dead.header
    record = RunRecord(run_id=header.run_id, flow=apply_flow(header.kind), parameters=header.parameters)
    record.started_at = datetime.fromisoformat(header.started_at)
    record.errors.append(
        redact(
            f"stopped before its commit (killed, or its machine went down): {dead.writes} writes may have reached the service; "
            f"run {by} recovered them from its journal, so `shipsync apply undo {header.run_id}` puts them back"
        )
    )
    record.finish("failed")
    return record
