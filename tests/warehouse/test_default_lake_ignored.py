"""The default lake (`./warehouse`, beside the data dictionary in a clone) is ignored by git: a
lake made there, its data files flushed, leaves `git status` clean."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from shipsync.warehouse.lake import connect_lake
from support.lake import location, sql_now

PROJECT = Path(__file__).resolve().parents[2]


def git(folder: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, check=True)
    return done.stdout


def test_a_lake_in_the_default_folder_leaves_git_status_clean(tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    (clone / "warehouse").mkdir(parents=True)
    shutil.copyfile(PROJECT / ".gitignore", clone / ".gitignore")
    shutil.copyfile(PROJECT / "warehouse" / "README.md", clone / "warehouse" / "README.md")
    git(clone, "init", "-q")
    git(clone, "add", "-A")
    assert git(clone, "status", "--porcelain", "--untracked-files=all").split() == ["A", ".gitignore", "A", "warehouse/README.md"]
    git(clone, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "clone")

    lake = clone / "warehouse"
    sql_now(lake, "INSERT INTO sync_runs (run_id, flow, started_at, status) VALUES ('r1', 'test', now(), 'completed')")
    writer = connect_lake(location(lake), read_only=False)
    try:
        writer.con.execute("CALL ducklake_flush_inlined_data(?)", [writer.alias])
    finally:
        writer.close()
    assert any((lake / "data").rglob("*.parquet")) and (lake / "catalog.sqlite").exists()
    assert git(clone, "status", "--porcelain", "--untracked-files=all") == ""
