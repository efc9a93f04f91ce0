"""Publishing beyond this machine: a state copied to a shared folder (or a folder that an object
store syncs or mounts), under the account's name, and a catalog of every account found there.

    FOLDER/ACCOUNT.duckdb        the account's catalog (views over FOLDER/ACCOUNT/data/... or URL/ACCOUNT/data/...)
    FOLDER/ACCOUNT/current.json  the newest manifest, for pyarrow and other Parquet readers
    FOLDER/ACCOUNT/{data,states}/
    FOLDER/accounts.duckdb       every account's tables together, with an `account` column

Data files are immutable and uniquely named, so a copy sends only the files the state added. Each
file is copied under a temporary name and renamed, and the catalog is replaced last: a reader on
another machine sees the previous state until then. Readers' locks on another machine are not
visible here, so superseded states stay for `retention.UNSEEN_KEEP_S`.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from shipsync.warehouse.catalog import Locate, install, table_views, write_catalog, write_json
from shipsync.warehouse.retention import UNSEEN_KEEP_S, collect, read_manifest
from shipsync.warehouse.snapshot import Manifest, referenced_files

if TYPE_CHECKING:
    from shipsync.warehouse.publishing import Target

COMBINED = "accounts"


def _locator(target: Target, account: str) -> Locate:
    base = f"{target.url.rstrip('/')}/{account}" if target.url else str((target.folder / account).absolute())
    return lambda relative: f"{base}/{relative}"


def mirror(con: duckdb.DuckDBPyConnection, root: Path, manifest: Manifest, target: Target, account: str) -> None:
    """Copy the state's new files to `target`, then its manifest and catalog; then the combined catalog."""
    if account == COMBINED:
        raise ValueError(f"account name {COMBINED!r} is reserved for the catalog of all accounts")
    there = target.folder / account
    (there / "states").mkdir(parents=True, exist_ok=True)
    for relative in sorted(referenced_files(manifest)):
        destination = there / relative
        if destination.exists():
            continue
        destination.parent.mkdir(parents=True, exist_ok=True)
        staging = destination.with_name(f".{destination.name}.{os.getpid()}.new")
        shutil.copyfile(root / relative, staging)
        os.replace(staging, destination)
    locate = _locator(target, account)
    state = there / "states" / f"g{manifest['generation']:08d}.duckdb"
    write_json(state.with_suffix(".json"), manifest)
    write_catalog(con, state, table_views(manifest["tables"], locate), manifest, manifest["views"])
    install(state, target.folder / f"{account}.duckdb")
    write_json(there / "current.json", {**manifest, "root": locate("").rstrip("/")})
    collect(there, [target.folder / f"{account}.duckdb"], grace_s=UNSEEN_KEEP_S)
    write_combined(con, target)


def accounts(folder: Path) -> dict[str, Manifest]:
    found = {}
    for current in sorted(folder.glob("*/current.json")):
        manifest = read_manifest(current)
        if manifest is not None and current.parent.name != COMBINED:
            found[current.parent.name] = manifest
    return found


def combined_views(folder: Path, target: Target, found: dict[str, Manifest]) -> dict[str, str]:
    """One view per table: each account's rows with its name in `account`, columns matched by name."""
    names = sorted({name for manifest in found.values() for name in manifest["tables"]})
    statements = {}
    for name in names:
        parts = []
        for account, manifest in found.items():
            state = manifest["tables"].get(name)
            if state is None:
                continue
            locate = _locator(target, account)
            files = ", ".join("'" + locate(f["path"]).replace("'", "''") + "'" for f in state["files"])
            parts.append(f"SELECT '{account.replace(chr(39), chr(39) * 2)}' AS account, * FROM read_parquet([{files}])")
        statements[name] = f'CREATE VIEW "{name}" AS ' + " UNION ALL BY NAME ".join(parts)
    return statements


def write_combined(con: duckdb.DuckDBPyConnection, target: Target) -> None:
    """FOLDER/accounts.duckdb over every account's newest state (tables only, with `account`)."""
    found = accounts(target.folder)
    if not found:
        return
    there = target.folder / f".{COMBINED}"
    (there / "states").mkdir(parents=True, exist_ok=True)
    generation = max((int(p.stem[1:]) for p in (there / "states").glob("g*.json")), default=0) + 1
    manifest: Manifest = {
        "generation": generation,
        "published_at": max(m["published_at"] for m in found.values()),
        "account": None,
        "accounts": {name: m["generation"] for name, m in found.items()},
        "tables": {},
    }
    state = there / "states" / f"g{generation:08d}.duckdb"
    write_json(state.with_suffix(".json"), manifest)
    write_catalog(con, state, combined_views(target.folder, target, found), manifest, [])
    install(state, target.folder / f"{COMBINED}.duckdb")
    collect(there, [target.folder / f"{COMBINED}.duckdb"], grace_s=UNSEEN_KEEP_S)
