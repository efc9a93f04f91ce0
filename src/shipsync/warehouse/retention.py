"""Removing old states once nobody has them open, and the files only they used.

A DuckDB reader holds a POSIX read lock on the file it opened for as long as its connection
lives, and the kernel lists every such lock in /proc/locks with the file's device and inode. A
superseded state is kept while any process holds its catalog, and for a grace period after it
was superseded (for pyarrow readers of a manifest, who take no lock, and for a reader that opened
the file an instant before it was replaced and has not locked it yet). Where the locks are not
visible (another OS, or readers on other machines of a shared folder), states are kept for
`UNSEEN_KEEP_S` after they were superseded instead.
"""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path

import orjson

from shipsync.warehouse.snapshot import Manifest, referenced_files

GRACE_S = 600.0
UNSEEN_KEEP_S = 24 * 3600.0
PROC_LOCKS = Path("/proc/locks")


def locked_files() -> set[tuple[int, int]] | None:
    """(device, inode) of every file some process holds a lock on; None where that is not visible."""
    try:
        text = PROC_LOCKS.read_text()
    except OSError:
        return None
    held = set()
    for line in text.splitlines():
        fields = line.split()
        # "1: POSIX  ADVISORY  READ 26228 fe:00:2146931 0 EOF" (a "->" marks a waiter: skip it)
        if len(fields) < 6 or fields[1] == "->":
            continue
        try:
            major, minor, inode = fields[5].split(":")
            held.add((os.makedev(int(major, 16), int(minor, 16)), int(inode)))
        except ValueError:
            continue
    return held


def state_files(root: Path) -> list[tuple[int, Path]]:
    """(generation, manifest path) of every state under `root`, oldest first."""
    found = []
    for path in (root / "states").glob("g*.json"):
        try:
            found.append((int(path.stem[1:]), path))
        except ValueError:
            continue
    return sorted(found)


def read_manifest(path: Path) -> Manifest | None:
    try:
        value: Manifest = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    return value


def _held(catalog: Path, locks: set[tuple[int, int]] | None, superseded_for: float, in_use: Iterable[Path]) -> bool:
    try:
        info = os.stat(catalog)
    except OSError:
        return False
    if any(os.path.exists(p) and os.path.samefile(p, catalog) for p in in_use):
        return True
    if locks is None:
        return superseded_for < UNSEEN_KEEP_S
    return (info.st_dev, info.st_ino) in locks


def collect(root: Path, in_use: Iterable[Path] = (), *, grace_s: float = GRACE_S, now: float | None = None) -> list[int]:
    """Remove states no reader can still be using, then data files no remaining state names.
    Returns the generations removed. Call with the publisher's lock held."""
    states = state_files(root)
    if not states:
        return []
    now = time.time() if now is None else now
    manifests = {generation: read_manifest(path) for generation, path in states}
    superseded_at = {}
    for (generation, _), (successor, _) in itertools.pairwise(states):
        successor_manifest = manifests[successor]
        superseded_at[generation] = _timestamp(successor_manifest["published_at"]) if successor_manifest else now
    if all(now - at < grace_s for at in superseded_at.values()):
        return []  # nothing old enough to go: no need to look at locks or files
    locks = locked_files()
    in_use = list(in_use)
    removed = []
    for generation, path in states[:-1]:
        superseded = superseded_at[generation]
        catalog = path.with_suffix(".duckdb")
        if now - superseded < grace_s or _held(catalog, locks, now - superseded, in_use):
            continue
        catalog.unlink(missing_ok=True)
        path.unlink(missing_ok=True)
        removed.append(generation)
        manifests.pop(generation, None)
    keep: set[str] = set()
    for manifest in manifests.values():
        if manifest:
            keep |= referenced_files(manifest)
    for data_file in (root / "data").glob("*/*.parquet"):
        if str(data_file.relative_to(root)) not in keep:
            data_file.unlink(missing_ok=True)
    return removed


def _timestamp(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()
