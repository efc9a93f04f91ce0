"""`shipsync sql` only reads the lake: each statement that reached past a read-only ATTACH (a file
written, a database attached or created, the lake attached writable, a secret file read, another
SQLite database read, files of the lake deleted, a setting changed) is refused in one line and
leaves no trace; reads, `SET VARIABLE`, time travel and DuckLake's own readers still work; what
data holds is shown escaped, never acted on by the terminal.

The statements run on one prompt for the module (`read_only_prompt`, what the command opens:
loading the extensions into a DuckDB of its own costs about half a second), and through the
command itself where its printing or its exit status is what is shown."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from shipsync.cli import app
from shipsync.warehouse.lake import connect_lake
from shipsync.warehouse.read_only_sql import ReadOnlyPrompt, RefusedStatement, read_only_prompt
from support.lake import analyst, location, sql_now

runner = CliRunner()
CANARY = "canary-secret-7f3a9c"
ACTING = ("\x1b", "\x07", "\u202e")
ESCAPES = "\x1b]0;owned\x07\x1b[2J\u202eexe.txt"


def _lake_with_files_scheduled_for_deletion(where: Path) -> int:
    """Runs in the ledger (one named with escape sequences), flushed to files twice, the files
    merged and the snapshots before expired: the replaced files are what DuckLake's clean-up
    deletes (how many)."""
    rows = [(f"r{n}", ESCAPES if n == 1 else "test") for n in range(6)]
    for batch in (rows[:3], rows[3:]):
        values = ", ".join("(?, ?, now(), 'completed')" for _ in batch)
        sql_now(where, f"INSERT INTO sync_runs (run_id, flow, started_at, status) VALUES {values}", [v for row in batch for v in row])
        writer = connect_lake(location(where), read_only=False)
        try:
            writer.con.execute("CALL ducklake_flush_inlined_data(?)", [writer.alias])
        finally:
            writer.close()
    writer = connect_lake(location(where), read_only=False)
    try:
        writer.con.execute(f'CALL "{writer.alias}".merge_adjacent_files()')
        writer.con.execute("SELECT count(*) FROM ducklake_expire_snapshots(?, older_than => now())", [writer.alias]).fetchall()
        scheduled = f'"__ducklake_metadata_{writer.alias}".ducklake_files_scheduled_for_deletion'
        row = writer.con.execute(f"SELECT count(*) FROM {scheduled}").fetchone()
    finally:
        writer.close()
    return int(row[0]) if row else 0


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A lake with files scheduled for deletion (`_lake_with_files_scheduled_for_deletion`);
    SHIPSYNC_WAREHOUSE names it, and the working folder is beside it."""
    root = tmp_path_factory.mktemp("sql")
    where = root / "warehouse"
    assert _lake_with_files_scheduled_for_deletion(where) > 0
    with pytest.MonkeyPatch.context() as env:
        env.setenv("SHIPSYNC_WAREHOUSE", str(where))
        env.chdir(root)
        yield where


@pytest.fixture(scope="module")
def prompt(lake: Path) -> Iterator[ReadOnlyPrompt]:
    with read_only_prompt(location(lake)) as opened:
        yield opened


def files_under(folder: Path) -> set[Path]:
    """The files below `folder`, but for SQLite's own beside a catalog it opens."""
    return {p for p in folder.rglob("*") if p.is_file() and not p.name.endswith(("-wal", "-shm"))}


def tables(where: Path) -> set[str]:
    with analyst(where) as con:
        return {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() WHERE database_name = ?", [con.alias]).fetchall()}


def refused(prompt: ReadOnlyPrompt, statement: str) -> str:
    with pytest.raises((RefusedStatement, duckdb.Error)) as raised:
        prompt.run(statement)
    return str(raised.value)


def sql(*args: str, stdin: str | None = None) -> tuple[int, str]:
    result = runner.invoke(app, ["sql", *args], input=stdin)
    return result.exit_code, result.output


def test_copy_to_writes_no_file_anywhere(prompt: ReadOnlyPrompt, lake: Path) -> None:
    before = files_under(lake.parent)
    for target in (lake.parent / "out.csv", lake / "data" / "planted.parquet"):
        assert "does not run COPY statements" in refused(prompt, f"COPY (SELECT 1) TO '{target}'")
    assert "EXPORT statements" in refused(prompt, f"EXPORT DATABASE '{lake.parent / 'export'}'")
    assert "EXPLAIN of anything but a query" in refused(prompt, f"EXPLAIN ANALYZE COPY (SELECT 1) TO '{lake.parent / 'out.csv'}'")
    assert files_under(lake.parent) == before


def test_attach_creates_no_database_and_the_lake_stays_read_only(prompt: ReadOnlyPrompt, lake: Path) -> None:
    before, lake_tables = files_under(lake.parent), tables(lake)
    assert "ATTACH statements" in refused(prompt, f"ATTACH '{lake.parent / 'new.duckdb'}' AS made")
    assert "ATTACH statements" in refused(prompt, "ATTACH ':memory:' AS scratch")
    # The lake again, without READ_ONLY, then a table in it: none of it runs.
    writable = f"ATTACH 'ducklake:sqlite:{lake / 'catalog.sqlite'}' AS rw (DATA_PATH '{lake / 'data'}/')"
    assert "ATTACH statements" in refused(prompt, f"{writable}; CREATE TABLE rw.main.planted AS SELECT 1 AS x")
    assert "CREATE statements" in refused(prompt, "CREATE TABLE planted AS SELECT 1 AS x")
    assert "DETACH statements" in refused(prompt, "DETACH shipsync")
    assert files_under(lake.parent) == before
    assert tables(lake) == lake_tables


def test_no_file_outside_the_lake_is_read(prompt: ReadOnlyPrompt, tmp_path: Path) -> None:
    secrets = tmp_path / "secrets.json"
    secrets.write_text(f'{{"webhook": "{CANARY}"}}')
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE creds (secret TEXT)")
        db.execute("INSERT INTO creds VALUES (?)", [CANARY])
    for statement in (
        f"FROM read_text('{secrets}')",
        f"FROM read_csv('{secrets}')",
        f"SELECT * FROM '{secrets}'",
        f"FROM glob('{tmp_path}/*')",
        f"FROM sqlite_scan('{other}', 'creds')",
        f"SELECT * FROM '{other}'",
        f"FROM query('FROM sqlite_scan(''{other}'', ''creds'')')",
        f"SET VARIABLE leaked = (SELECT content FROM read_text('{secrets}'))",
    ):
        assert CANARY not in refused(prompt, statement), statement


def test_the_lakes_files_cannot_be_deleted_from_the_prompt(prompt: ReadOnlyPrompt, lake: Path) -> None:
    # From a read-only attach, DuckLake's clean-up deletes the files scheduled for deletion before
    # it fails to update the catalog.
    before = files_under(lake / "data")
    for statement in (
        "FROM ducklake_cleanup_old_files('shipsync', cleanup_all => true)",
        "CALL ducklake_cleanup_old_files('shipsync', cleanup_all => true)",
        "SELECT count(*) FROM (SUMMARIZE SELECT * FROM ducklake_cleanup_old_files('shipsync', cleanup_all => true))",
        "FROM ducklake_delete_orphaned_files('shipsync', cleanup_all => true)",
        "FROM ducklake_expire_snapshots('shipsync', older_than => now())",
        "FROM ducklake_set_option('shipsync', 'data_inlining_row_limit', 5)",
        "FROM json_execute_serialized_sql(json_serialize_sql('FROM ducklake_cleanup_old_files(''shipsync'', cleanup_all => true)'))",
    ):
        assert "does not run" in refused(prompt, statement), statement
    assert files_under(lake / "data") == before


def test_settings_and_extensions_are_locked(prompt: ReadOnlyPrompt) -> None:
    for statement in (
        "SET enable_external_access = true",
        "RESET lock_configuration",
        "SET allowed_directories = ['/']",
        "INSTALL httpfs",
        "LOAD httpfs",
        "PRAGMA enable_profiling",
    ):
        assert "does not run" in refused(prompt, statement), statement
    assert prompt.con.execute("SELECT current_setting('enable_external_access'), current_setting('lock_configuration')").fetchone() == (
        False,
        True,
    )


def test_reads_time_travel_variables_and_ducklakes_readers_work(prompt: ReadOnlyPrompt) -> None:
    newest = prompt.run("SELECT max(snapshot_id) FROM ducklake_snapshots('shipsync')")[1][0][0]
    columns, rows = prompt.run(
        "SET VARIABLE as_of = DATE '2026-05-01'; "
        f"SELECT (SELECT count(*) FROM sync_runs AT (VERSION => {newest})) AS then_, (SELECT count(*) FROM sync_runs) AS now_, "
        f"(SELECT count(*) FROM table_changes('sync_runs', {newest}, {newest})) AS changes, "
        "(SELECT count(*) FROM ducklake_table_info('shipsync') WHERE table_name = 'sync_runs') AS info, "
        "CAST(getvariable('as_of') AS VARCHAR) AS as_of, current_database() AS db"
    )
    assert rows == [(6, 6, 0, 1, "2026-05-01", "shipsync")], (columns, rows)
    for statement in ("EXPLAIN SELECT count(*) FROM container_status", "DESCRIBE sync_runs", "SUMMARIZE sync_runs", "FROM pickup_risk"):
        prompt.run(statement)
    prompt.run("BEGIN TRANSACTION; FROM sync_runs; COMMIT")


def test_the_command_refuses_in_one_line_and_prints_escapes_escaped(lake: Path) -> None:
    code, output = sql("-c", f"COPY (SELECT 1) TO '{lake.parent / 'out.csv'}'")
    assert (code, output) == (1, "error: shipsync sql only reads the warehouse: it does not run COPY statements\n")
    code, output = sql("-c", "SELECT flow, flow AS \"\x1b[31mred\" FROM sync_runs WHERE run_id = 'r1'")
    assert code == 0, output
    assert not [c for c in ACTING if c in output], repr(output)
    assert "\\x1b]0;owned\\x07\\x1b[2J\\u202eexe.txt" in output and "\\x1b[31mred" in output
    # CSV into a file or a pipe keeps values exact: it is data, not a screen.
    code, output = sql("-c", "SELECT flow FROM sync_runs WHERE run_id = 'r1'", "--output", "csv")
    assert (code, output.splitlines()) == (0, ["flow", ESCAPES])


def test_the_interactive_prompt_refuses_and_carries_on(lake: Path) -> None:
    out = lake.parent / "out.csv"
    code, output = sql(stdin=f"COPY (SELECT 1) TO '{out}';\nSELECT flow FROM sync_runs WHERE run_id = 'r1';\n.quit\n")
    assert code == 0, output
    assert "it does not run COPY statements" in output and "\\x1b]0;owned" in output
    assert not out.exists()
    assert not [c for c in ACTING if c in output], repr(output)
