"""`shipsync warehouse import`: a warehouse of the last layout, made by the last release (its
published state, DuckDB 2.0 files this DuckDB cannot open), copied into the lake whole."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
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


@pytest.mark.slow
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
        # An email's one sender then is a list of one now.
        senders = con.execute('SELECT count(*), count(*) FILTER (len("from") = 1) FROM email_submissions').fetchone()
        assert senders is not None and senders[0] == senders[1] == expected["email_submissions"] > 0
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


@pytest.mark.slow
def test_hostile_table_names_in_a_manifest_go_nowhere(old: Path, tmp_path: Path) -> None:
    manifest_path = old.parent / "shipsync.published" / "current.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["tables"]["x\"; COPY (SELECT 1) TO '/tmp/owned'; --"] = manifest["tables"]["documents"]
    manifest_path.write_text(json.dumps(manifest))
    with pytest.raises(InputError, match="has no place in this warehouse"):
        import_warehouse(location(tmp_path / "lake"), old)
    assert not Path("/tmp/owned").exists()


@pytest.mark.slow
def test_the_cli_imports_and_prints_each_table(old: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHIPSYNC_WAREHOUSE", str(tmp_path / "lake"))
    done = CliRunner().invoke(app, ["warehouse", "import", str(old)])
    assert done.exit_code == 0, done.output
    assert "webhook_events" in done.output and "339" in done.output
    again = CliRunner().invoke(app, ["warehouse", "import", str(old)])
    assert again.exit_code == 1 and "already holds data" in again.output and "Traceback" not in again.output


@pytest.mark.slow
def test_an_edited_reference_number_joins_the_list_the_lake_keeps(old: Path, tmp_path: Path) -> None:
    """The last layout kept a tracking request's edited `ref_number` in a column of its own; the lake
    reflects an edit into `ref_numbers`, so an old edit joins that list (once), never dropped."""
    folder = old.parent / "shipsync.published" / "data" / "tracking_requests"
    files = sorted(folder.glob("*.parquet"))
    assert files
    con = duckdb.connect()
    rewritten = tmp_path / "rewritten.parquet"
    con.execute(
        f"COPY (SELECT * REPLACE (CASE WHEN row_number() OVER (ORDER BY id) = 1 THEN 'PO-EDITED' "
        f"WHEN row_number() OVER (ORDER BY id) = 2 THEN ref_numbers[1] END AS ref_number) "
        f"FROM read_parquet({[str(f) for f in files]!r})) TO '{rewritten}' (FORMAT parquet)"
    )
    first, second = con.execute(f"SELECT id, ref_numbers FROM '{rewritten}' ORDER BY id LIMIT 2").fetchall()
    con.close()
    for extra in files[1:]:
        extra.write_bytes(b"")  # the manifest names them; the first holds every row now
    shutil.copy(rewritten, files[0])
    manifest_path = old.parent / "shipsync.published" / "current.json"
    manifest = json.loads(manifest_path.read_text())
    state = manifest["tables"]["tracking_requests"]
    state["files"] = [{**state["files"][0], "rows": state["rows"]}]
    manifest_path.write_text(json.dumps(manifest))
    import_warehouse(location(tmp_path / "lake"), old)
    with analyst(tmp_path / "lake") as lake:
        found = dict(lake.execute("SELECT id, ref_numbers FROM tracking_requests WHERE id IN (?, ?)", [first[0], second[0]]).fetchall())
    assert found == {first[0]: [*first[1], "PO-EDITED"], second[0]: second[1]}  # the second's edit was already listed
