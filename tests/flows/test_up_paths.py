"""`shipsync up` hands its children (run in the project folder) the paths it shares with them whole."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from shipsync.config import load_settings
from shipsync.orchestration.up import anchored_paths


@pytest.fixture
def elsewhere(tmp_path: Path) -> Iterator[Path]:
    """Up run from a folder of the operator's, not the project's."""
    here = Path.cwd()
    os.chdir(tmp_path)
    try:
        yield tmp_path
    finally:
        os.chdir(here)


def test_a_postgresql_lakes_spool_is_in_the_state_folder_where_up_runs(elsewhere: Path) -> None:
    settings = load_settings(warehouse="ducklake:postgres:dbname=lake host=127.0.0.1", warehouse_data="s3://lake/data/", spool=None)
    paths = anchored_paths(settings, elsewhere / ".shipsync")
    assert paths == {"SHIPSYNC_STATE_DIR": str(elsewhere / ".shipsync"), "SHIPSYNC_SPOOL": str(elsewhere / ".shipsync" / "spool")}


def test_a_relative_warehouse_folder_and_its_spool_are_where_up_runs(elsewhere: Path) -> None:
    settings = load_settings(warehouse="warehouse", spool=None)
    paths = anchored_paths(settings, elsewhere / ".shipsync")
    assert paths["SHIPSYNC_WAREHOUSE"] == str(elsewhere / "warehouse")
    assert paths["SHIPSYNC_SPOOL"] == str(elsewhere / "warehouse" / "spool")
