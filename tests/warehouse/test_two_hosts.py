"""Several hosts, for real: the lake's catalog in a real PostgreSQL and its data on S3-compatible
object storage (moto's server, with IAM enforced), and two "hosts" (separate working folders, homes,
spools, secrets and Prefect homes; nothing shared but the catalog and the bucket) that run the CLI
side by side against one sandbox.

- `pull all` on one host and `events load` on the other, at the same time: both commit, nothing
  is lost, and no data file lands on either host's disk;
- two receivers, each with its own spool, both receive one notification: it lands once;
- another account's runs land in a schema of their own in the same lake;
- an analyst with a SELECT-only PostgreSQL role and read-only storage keys reads everything, and
  writing with those credentials fails.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import orjson
import pytest

from shipsync.warehouse_location import ObjectStorage, lake_location
from shipsync.webhooks.receiver import Receiver
from shipsync.webhooks.signature import sign
from shipsync.webhooks.writer import SpoolWriter
from shipsync_bench.journey_year import spooled_journeys
from shipsync_bench.postgres import DATABASE, USER, TemporaryPostgres
from shipsync_bench.processes import SandboxProcess
from shipsync_sandbox.serving import BackgroundServer
from shipsync_sandbox.stream import document_pages
from support.http import HTTP
from support.object_storage import BUCKET, Keys
from support.object_storage import ObjectStorage as S3Server
from support.sandboxes import shipsync_env
from support.waiting import HANG_S

KEY = "sandbox-key-1"
SECRET = "two-hosts-webhook-secret-0123456789"
ANALYST, ANALYST_PASSWORD = "lake_analyst", "analyst-password-5d1e"

pytestmark = pytest.mark.slow


def catalog(pg: TemporaryPostgres, user: str = USER) -> str:
    return f"ducklake:postgres:dbname={DATABASE} host=127.0.0.1 port={pg.port} user={user}"


def host_env(folder: Path, pg: TemporaryPostgres, s3: S3Server, sandbox: SandboxProcess, **extra: str) -> dict[str, str]:
    """A host: its own folder for everything local; the catalog and the bucket shared."""
    (folder / "home").mkdir(parents=True)
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(folder / "home"),  # DuckDB's extension folder too: each host installs its own
        "PGPASSWORD": pg.password,
        **s3.writer.environment(s3.endpoint),
        **shipsync_env(
            sandbox.api_url,
            catalog(pg),
            KEY,
            warehouse_data=f"s3://{BUCKET}/lake/",
            spool=str(folder / "spool"),
            state_dir=str(folder / "state"),
            secrets_file=str(folder / "config" / "secrets.json"),
        ),
        "PREFECT_HOME": str(folder / "prefect"),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        **extra,
    }


def shipsync(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "shipsync", *args], env=env, capture_output=True, text=True, timeout=600)


def analyst_sql(pg: TemporaryPostgres, s3: S3Server, keys: Keys, user: str, password: str, sql: str, *, read_only: bool = True) -> Any:
    """Query the lake in a fresh process with an analyst's credentials (their own, not the pipeline's)."""
    script = (
        "import sys, json, duckdb\n"
        "from shipsync.warehouse.analyst import attach_statements\n"
        "from shipsync.warehouse_location import ObjectStorage, lake_location\n"
        "from shipsync.warehouse.lake import connect_lake\n"
        f"storage = ObjectStorage({keys.key_id!r}, {keys.secret!r}, None, 'us-east-1', {s3.endpoint!r})\n"
        f"location = lake_location({catalog(pg, user)!r}, 's3://{BUCKET}/lake/', None, storage)\n"
        f"lake = connect_lake(location, read_only={read_only})\n"
        f"print(json.dumps(lake.con.execute({sql!r}).fetchall(), default=str))\n"
    )
    env = {**os.environ, "PGPASSWORD": password}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=HANG_S)
    return done


def test_two_hosts_share_one_lake_on_postgresql_and_object_storage(tmp_path: Path) -> None:
    with (
        TemporaryPostgres() as pg,
        S3Server(tmp_path / "s3") as s3,
        SandboxProcess("--rate-limit", "0", "--documents", "40", "--api-key", KEY) as sandbox,
    ):
        a = host_env(tmp_path / "host-a", pg, s3, sandbox)
        b = host_env(tmp_path / "host-b", pg, s3, sandbox)
        # Host B's deliveries: journeys of containers, spooled as B's receiver leaves them.
        Path(b["SHIPSYNC_SPOOL"]).mkdir(mode=0o700)
        deliveries = list(spooled_journeys(document_pages(6), containers=2))
        (Path(b["SHIPSYNC_SPOOL"]) / "segment-00000000000000000001-1.spool").write_bytes(b"".join(deliveries))
        assert shipsync(a, "pull", "documents", "--id", "none-such").returncode == 0  # the lake and its tables, made once

        # At the same time: host A pulls everything, host B loads its spool.
        outcomes: dict[str, subprocess.CompletedProcess[str]] = {}
        runs = [
            threading.Thread(target=lambda: outcomes.__setitem__("pull", shipsync(a, "pull", "all"))),
            threading.Thread(target=lambda: outcomes.__setitem__("load", shipsync(b, "events", "load"))),
        ]
        for run in runs:
            run.start()
        for run in runs:
            run.join()
        assert outcomes["pull"].returncode == 0, outcomes["pull"].stderr[-3000:]
        assert outcomes["load"].returncode == 0, outcomes["load"].stderr[-3000:]
        assert f"events load: {len(deliveries)} loaded" in outcomes["load"].stdout

        # Two receivers, one spool each (one per host): the service delivers one notification to both.
        notification = orjson.loads(deliveries[0].split(b"\n", 1)[1].rsplit(b"\n", 1)[0])
        notification["data"]["id"] = "delivered-to-both-hosts"
        body = orjson.dumps(notification)
        for env in (a, b):
            writer = SpoolWriter(Path(env["SHIPSYNC_SPOOL"]))
            with BackgroundServer(Receiver(writer, [SECRET])) as receiver:
                answer = HTTP.post(f"{receiver.url}/webhook", content=body, headers={"X-T49-Webhook-Signature": sign(SECRET, body)})
                assert answer.status_code == 200
            writer.close()
        loads = [
            threading.Thread(target=lambda e=env, n=name: outcomes.__setitem__(n, shipsync(e, "events", "load")))
            for name, env in (("a", a), ("b", b))
        ]
        for load in loads:
            load.start()
        for load in loads:
            load.join()
        assert outcomes["a"].returncode == 0 and outcomes["b"].returncode == 0, outcomes["a"].stderr[-2000:] + outcomes["b"].stderr[-2000:]

        # Another account, another schema of the same lake.
        acme = {**b, "SHIPSYNC_ACCOUNT": "acme"}
        assert shipsync(acme, "pull", "documents", "--all").returncode == 0

        # What the lake holds, as the pipeline's own credentials read it.
        storage = ObjectStorage(s3.writer.key_id, s3.writer.secret, None, "us-east-1", s3.endpoint)
        os.environ["PGPASSWORD"] = pg.password
        try:
            from support.lake import analyst

            lake = lake_location(catalog(pg), f"s3://{BUCKET}/lake/", None, storage)
            with analyst(lake) as con:
                events = con.execute("SELECT count(*), count(DISTINCT notification_id) FROM webhook_events").fetchone()
                twice = con.execute(
                    "SELECT count(*) FROM webhook_redeliveries WHERE notification_id = 'delivered-to-both-hosts'"
                ).fetchone()
                documents = con.execute("SELECT count(*) FROM documents").fetchone()
                acme_documents = con.execute("SELECT count(*) FROM acme.documents").fetchone()
                flows = dict(con.execute("SELECT flow, count(DISTINCT snapshot_id) FROM sync_runs GROUP BY flow").fetchall())
                tables = [
                    r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() WHERE database_name = current_database()").fetchall()
                ]
                files = [
                    path
                    for table in tables
                    for (path,) in con.execute(
                        "SELECT data_file FROM ducklake_list_files(current_database(), ?, schema => 'main')", [table]
                    ).fetchall()
                ]
        finally:
            del os.environ["PGPASSWORD"]
        assert events == (len(deliveries) + 1, len(deliveries) + 1)  # nothing lost, nothing twice
        assert twice == (1,)  # the second host's copy counted as a redelivery
        assert documents is not None and documents[0] == 40 and acme_documents == (40,)
        assert flows["load_events"] == 3 and flows["pull_documents"] >= 2 and flows["pull_places"] == 1  # `pull all`: one snapshot
        assert files and all(f.startswith(f"s3://{BUCKET}/lake/") for f in files)
        assert set(files) <= {f"s3://{BUCKET}/{key}" for key in s3.object_keys()}
        local = [p for p in tmp_path.glob("host-*/**/*") if p.suffix in (".parquet", ".sqlite", ".duckdb")]
        assert not local, local  # no data file, no catalog on either host

        # An analyst: a SELECT-only role and read-only storage keys.
        pg.execute(
            f"CREATE ROLE {ANALYST} LOGIN PASSWORD '{ANALYST_PASSWORD}'",
            f"GRANT CONNECT ON DATABASE {DATABASE} TO {ANALYST}",
            f"GRANT USAGE ON SCHEMA public TO {ANALYST}",
            f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {ANALYST}",
            f"ALTER DEFAULT PRIVILEGES FOR ROLE {USER} IN SCHEMA public GRANT SELECT ON TABLES TO {ANALYST}",
            database=DATABASE,
        )
        read = analyst_sql(pg, s3, s3.reader, ANALYST, ANALYST_PASSWORD, "SELECT count(*) FROM webhook_events")
        assert read.returncode == 0, read.stderr[-2000:]
        assert orjson.loads(read.stdout) == [[len(deliveries) + 1]]
        catalog_refuses = analyst_sql(
            pg, s3, s3.writer, ANALYST, ANALYST_PASSWORD, "INSERT INTO documents (id) VALUES ('by-an-analyst')", read_only=False
        )
        assert catalog_refuses.returncode != 0 and "permission denied" in catalog_refuses.stderr.lower()
        storage_refuses = analyst_sql(
            pg, s3, s3.reader, USER, pg.password, "INSERT INTO documents (id) SELECT 'x' || range FROM range(100)", read_only=False
        )
        assert storage_refuses.returncode != 0 and ("403" in storage_refuses.stderr or "AccessDenied" in storage_refuses.stderr)
