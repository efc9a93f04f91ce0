"""`shipsync warehouse import`: a warehouse of the last layout, made by the last release (its
published state, DuckDB 2.0 files this DuckDB cannot open), copied into the lake whole."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from shipsync.cli import app
from shipsync.errors import InputError
from shipsync.json_text import body_key
from shipsync.warehouse.import_file import import_warehouse
from support.lake import analyst, location, write_now

# Made by `shipsync demo --documents 12` on main at 6eaa240's warehouse code (DuckDB 2.0): its
# analysts' file and its newest published state (tests/fixtures/last-layout).
FIXTURE = Path(__file__).parents[1] / "fixtures" / "last-layout"


@pytest.fixture
def old(tmp_path: Path) -> Path:
    shutil.copytree(FIXTURE, tmp_path / "old")
    return tmp_path / "old" / "shipsync.duckdb"


def published_rows(old: Path) -> dict[str, int]:
    manifest = json.loads((old.parent / "shipsync.published" / "current.json").read_text())
    return {name: state["rows"] for name, state in manifest["tables"].items()}


def test_every_row_of_every_table_is_copied(old: Path, tmp_path: Path) -> None:
    report = import_warehouse(location(tmp_path / "lake"), old)
    expected = published_rows(old)
    assert report.rows == expected and sum(expected.values()) > 2_000
    with analyst(tmp_path / "lake") as con:
        for table, rows in expected.items():
            imported = rows + (table == "sync_runs")  # and the import's own run
            assert con.execute(f'SELECT count(*) FROM "{table}"').fetchone() == (imported,), table
        # Typed as the lake types them, views answering over the imported rows.
        assert con.execute("SELECT count(*) FROM container_status").fetchone() == (expected["containers"],)
        assert con.execute("SELECT count(*) FROM sync_runs WHERE flow = 'import_warehouse'").fetchone() == (1,)
        payload, key = con.execute("SELECT CAST(payload AS VARCHAR), body_sha256 FROM webhook_events LIMIT 1").fetchone()  # type: ignore[misc]
    assert key == body_key(payload.encode())  # a redelivery of an imported notification is told from a conflict


def test_a_lake_that_holds_data_is_not_imported_into(old: Path, tmp_path: Path) -> None:
    write_now(tmp_path / "lake", {"documents": {"id": ["d"]}})
    with pytest.raises(InputError, match="already holds data"):
        import_warehouse(location(tmp_path / "lake"), old)


def test_a_manifest_that_names_files_outside_its_folder_is_refused(old: Path, tmp_path: Path) -> None:
    manifest_path = old.parent / "shipsync.published" / "current.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["tables"]["documents"]["files"][0]["path"] = "../../../etc/passwd"
    manifest_path.write_text(json.dumps(manifest))
    with pytest.raises(InputError, match="outside the publication"):
        import_warehouse(location(tmp_path / "lake"), old)


def test_hostile_table_names_in_a_manifest_go_nowhere(old: Path, tmp_path: Path) -> None:
    manifest_path = old.parent / "shipsync.published" / "current.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["tables"]["x\"; COPY (SELECT 1) TO '/tmp/owned'; --"] = manifest["tables"]["documents"]
    manifest_path.write_text(json.dumps(manifest))
    with pytest.raises(InputError, match="has no place in this warehouse"):
        import_warehouse(location(tmp_path / "lake"), old)
    assert not Path("/tmp/owned").exists()


def test_the_cli_imports_and_prints_each_table(old: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHIPSYNC_WAREHOUSE", str(tmp_path / "lake"))
    done = CliRunner().invoke(app, ["warehouse", "import", str(old)])
    assert done.exit_code == 0, done.output
    assert "webhook_events" in done.output and "339" in done.output
    again = CliRunner().invoke(app, ["warehouse", "import", str(old)])
    assert again.exit_code == 1 and "already holds data" in again.output and "Traceback" not in again.output
