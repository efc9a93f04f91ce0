"""The statements `shipsync sql --print-attach` prints split on `;` into whole statements, for every
kind of lake: a `;` ends a statement and appears in no comment (the comments said `INSTALL
ducklake; INSTALL sqlite;`, and a script split on `;` broke)."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from shipsync.warehouse.analyst import attach_script
from shipsync.warehouse_location import LakeLocation, ObjectStorage, lake_location


def kinds(tmp_path: Path) -> dict[str, LakeLocation]:
    storage = ObjectStorage("key-id", "secret", None, "eu-west-1", "http://127.0.0.1:9000")
    return {
        "folder": lake_location(str(tmp_path / "warehouse")),
        "postgres and s3": lake_location("ducklake:postgres:dbname=lake host=db user=shipsync", "s3://bucket/lake/", None, storage),
    }


@pytest.mark.parametrize("kind", ["folder", "postgres and s3"])
def test_the_script_splits_on_semicolons_into_whole_statements(tmp_path: Path, kind: str) -> None:
    script = attach_script(kinds(tmp_path)[kind])
    lines = script.splitlines()
    statements = [line for line in lines if not line.startswith("--")]
    assert statements and all(line.endswith(";") and line.count(";") == 1 for line in statements), script
    parts = [part for part in script.split(";") if part.strip()]
    assert [[s.type for s in duckdb.extract_statements(part)] for part in parts] == [
        [s.type for s in duckdb.extract_statements(line)] for line in statements
    ]
    assert 'AS "shipsync"' in script


def test_no_comment_holds_a_semicolon_even_from_a_path(tmp_path: Path) -> None:
    script = attach_script(lake_location(f"ducklake:sqlite:{tmp_path / 'a;b' / 'lake.sqlite'}"))
    comments = [line for line in script.splitlines() if line.startswith("--")]
    assert len(comments) == 2 and not any(";" in line for line in comments), script
