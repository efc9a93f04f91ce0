"""Every kind of lake, missing or new, on a real PostgreSQL and an S3-compatible server (moto's):
commands that open it say in one line what to do (make the lake with a pull, create the database,
create the bucket), never DuckLake's "creating a new DuckLake is explicitly disabled"; a mistyped
bucket never becomes a new catalog's data path; and a lake's local data folder is private (0700)
whatever its catalog."""

from __future__ import annotations

import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from shipsync.cli import app
from shipsync.warehouse.lake import connect_lake
from shipsync.warehouse.ownership import MARKER_NAME
from shipsync.warehouse_location import ObjectStorage, lake_location
from shipsync_bench.postgres import USER, TemporaryPostgres
from support.lake import sql_now
from support.object_storage import BUCKET
from support.object_storage import ObjectStorage as S3Server

pytestmark = pytest.mark.slow  # a PostgreSQL server and moto's: seconds to start
runner = CliRunner()
INSERT = "INSERT INTO sync_runs (run_id, flow, started_at, status) VALUES ('r1', 'test', now(), 'completed')"


class Servers:
    def __init__(self, pg: TemporaryPostgres, s3: S3Server) -> None:
        self.pg, self.s3 = pg, s3

    def catalog(self, database: str) -> str:
        return f"ducklake:postgres:dbname={database} host=127.0.0.1 port={self.pg.port} user={USER}"

    def storage(self) -> ObjectStorage:
        return ObjectStorage(self.s3.writer.key_id, self.s3.writer.secret, None, "us-east-1", self.s3.endpoint)

    def env(self, warehouse: str, data: str | None = None) -> dict[str, str]:
        values = {"SHIPSYNC_WAREHOUSE": warehouse, "PGPASSWORD": self.pg.password, **self.s3.writer.environment(self.s3.endpoint)}
        return values | ({"SHIPSYNC_WAREHOUSE_DATA": data} if data else {})


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    with TemporaryPostgres() as pg, S3Server(tmp_path_factory.mktemp("s3")) as s3:
        for database in ("fresh", "lake", "bucketless"):
            pg.execute(f"CREATE DATABASE {database} OWNER {USER}")
        yield Servers(pg, s3)


def one_line_error(env: dict[str, str], *command: str) -> str:
    """The command's one error line (`status` says first whether `shipsync up` runs here)."""
    result = runner.invoke(app, list(command), env={"COLUMNS": "400", **env})
    assert result.exit_code == 1, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and result.output.endswith(errors[0] + "\n"), result.output
    assert "explicitly disabled" not in result.output and "Existing DuckLake" not in result.output
    return errors[0]


@pytest.fixture(autouse=True)
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # `status` looks for `shipsync up` in the working folder


def test_every_kind_of_missing_or_new_lake_says_what_to_do(servers: Servers, tmp_path: Path) -> None:
    kinds = {
        "a folder": servers.env(str(tmp_path / "warehouse")),
        "a SQLite catalog": servers.env(f"ducklake:sqlite:{tmp_path / 'elsewhere' / 'lake.sqlite'}"),
        "a new PostgreSQL database": servers.env(servers.catalog("fresh"), str(tmp_path / "shared")),
        "a new PostgreSQL database, data in a bucket": servers.env(servers.catalog("fresh"), f"s3://{BUCKET}/fresh/"),
        "a new PostgreSQL database, data in a bucket that does not exist": servers.env(
            servers.catalog("fresh"), "s3://no-such-bucket/lake/"
        ),
    }
    for kind, env in kinds.items():
        for command in (["status"], ["sql", "-c", "SELECT 1"]):
            said = one_line_error(env, *command)
            assert said.startswith("error: no warehouse at ") and said.endswith("run a pull first (e.g. `shipsync pull all`)"), kind
    missing = servers.env(servers.catalog("no_such_database"), str(tmp_path / "shared"))
    for command in (["status"], ["sql", "-c", "SELECT 1"], ["warehouse", "maintain"]):
        said = one_line_error(missing, *command)
        assert "the PostgreSQL database no_such_database of the warehouse does not exist: create it first" in said


def test_a_bucket_that_does_not_exist_never_becomes_a_catalogs_data_path(servers: Servers) -> None:
    mistyped = servers.env(servers.catalog("bucketless"), "s3://no-such-bucket/lake/")
    assert "its bucket does not exist, or these storage keys cannot list it" in one_line_error(mistyped, "warehouse", "maintain")
    # Nothing was made under the mistyped name: the right bucket makes the lake.
    right = servers.env(servers.catalog("bucketless"), f"s3://{BUCKET}/bucketless/")
    result = runner.invoke(app, ["warehouse", "maintain"], env=right)
    assert result.exit_code == 0, result.output
    assert f"bucketless/{MARKER_NAME}" in servers.s3.object_keys()
    moved = servers.env(servers.catalog("bucketless"), f"s3://{BUCKET}/elsewhere/")
    assert "the warehouse's catalog was made with the data path s3://" in one_line_error(moved, "status")


def test_a_postgresql_lakes_local_data_folder_is_private(servers: Servers, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PGPASSWORD", servers.pg.password)
    data = tmp_path / "shared" / "lakes" / "lake"
    lake = lake_location(servers.catalog("lake"), str(data))
    sql_now(lake, INSERT)
    writer = connect_lake(lake, read_only=False)
    try:
        writer.con.execute("CALL ducklake_flush_inlined_data(?)", [writer.alias])  # a data file, in folders DuckLake makes
    finally:
        writer.close()
    assert any(data.rglob("*.parquet"))
    for folder in (data, data.parent, data.parent.parent):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    assert stat.S_IMODE((data / MARKER_NAME).stat().st_mode) == 0o600


def test_the_prompt_on_a_postgresql_and_bucket_lake_reads_the_lake_and_nothing_else(
    servers: Servers, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PGPASSWORD", servers.pg.password)
    lake = lake_location(servers.catalog("lake_in_bucket"), f"s3://{BUCKET}/prompt/", None, servers.storage())
    servers.pg.execute(f"CREATE DATABASE lake_in_bucket OWNER {USER}")
    sql_now(lake, INSERT)
    env = servers.env(servers.catalog("lake_in_bucket"), f"s3://{BUCKET}/prompt/")
    result = runner.invoke(app, ["sql", "-c", "SELECT run_id FROM sync_runs", "--output", "csv"], env=env)
    assert (result.exit_code, result.output) == (0, "run_id\nr1\n")
    # The pipeline's role reaches the catalog's database; the prompt does not hand it over.
    drop = "FROM postgres_execute('__ducklake_metadata_shipsync', 'DROP TABLE ducklake_snapshot')"
    assert "does not run the function postgres_execute" in one_line_error(env, "sql", "-c", drop)
    assert "file system operations are disabled" in one_line_error(env, "sql", "-c", f"FROM read_text('s3://{BUCKET}/elsewhere/x')")
    assert runner.invoke(app, ["sql", "-c", "SELECT count(*) FROM sync_runs"], env=env).exit_code == 0
