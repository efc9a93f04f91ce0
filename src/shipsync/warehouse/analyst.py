"""How analysts open the warehouse from any DuckDB of the same version: the statements `shipsync
sql --print-attach` prints (extension loads, for a SQLite catalog the setting shipsync reads it
with, the `ATTACH ... (READ_ONLY)` as `shipsync`, the `USE` of the account's schema), and a plain
read-only connection for shipsync's own readers. `shipsync sql` itself opens the lake locked down
(`read_only_sql`). A read-only attach never waits for a run and no run waits for it: DuckLake
readers see the newest snapshot when they start a query.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import duckdb

from shipsync.redaction import mask_credentials
from shipsync.warehouse.extensions import Extension
from shipsync.warehouse.identifiers import ident, literal
from shipsync.warehouse.lake import SQLITE_CATALOG_READS, connect_lake, needed_extensions
from shipsync.warehouse_location import LakeLocation

ANALYST_ALIAS = "shipsync"
# The name DuckDB's repository knows an extension by (what `INSTALL` takes).
_INSTALL_NAME = {"sqlite_scanner": "sqlite", "postgres_scanner": "postgres"}


def _install_name(extension: Extension) -> str:
    return _INSTALL_NAME.get(extension.name, extension.name)


def attach_statements(location: LakeLocation, *, alias: str = ANALYST_ALIAS) -> list[str]:
    """The statements that open the warehouse read-only in any DuckDB: extension loads, the storage
    secret (with placeholders: an analyst uses their own, read-only, credentials), ATTACH, USE; for a
    SQLite catalog, the setting shipsync's own connections read it with (`lake.SQLITE_CATALOG_READS`)."""
    statements = [f"LOAD {_install_name(e)};" for e in needed_extensions(location)]
    if location.catalog_kind == "sqlite":
        statements.append(f"{SQLITE_CATALOG_READS};")  # the catalog read on one connection per query (`lake`)
    storage = location.storage
    if location.on_object_storage:
        options = ["TYPE s3", "KEY_ID '<your read-only access key id>'", "SECRET '<your secret access key>'"]
        if storage is not None and storage.region:
            options.append(f"REGION {literal(storage.region)}")
        if storage is not None and storage.endpoint_url:
            endpoint = storage.endpoint_url.split("://", 1)[-1].rstrip("/")
            options += [f"ENDPOINT {literal(endpoint)}", "URL_STYLE 'path'"]
            if storage.endpoint_url.startswith("http://"):
                options.append("USE_SSL false")
        options.append(f"SCOPE {literal(mask_credentials(location.data_path))}")
        statements.append(f"CREATE SECRET shipsync_storage ({', '.join(options)});")
    catalog = "ducklake:" + mask_credentials(location.catalog)  # an analyst's password: PGPASSWORD or ~/.pgpass
    data_path = mask_credentials(location.data_path)
    statements.append(f"ATTACH {literal(catalog)} AS {ident(alias)} (DATA_PATH {literal(data_path)}, READ_ONLY);")
    statements.append(f"USE {ident(alias)}.{ident(location.schema)};")
    return statements


def attach_script(location: LakeLocation) -> str:
    """`attach_statements`, one a line, after comments saying what a reader needs to know. A `;`
    ends a statement and nothing else: the script may be split on `;` (a comment holding one
    broke every statement after it)."""
    names = " and ".join(_install_name(e) for e in needed_extensions(location))
    comments = [
        f"shipsync's warehouse, read-only: {location.describe()}",
        f"for DuckDB {duckdb.__version__} with its {names} extensions (from a plain pip install: docs/analysts.md)",
    ]
    if location.catalog_kind == "postgres":
        comments.append("the catalog's password comes from PGPASSWORD or ~/.pgpass (a read-only role: docs/analysts.md)")
    return "\n".join([*(f"-- {comment.replace(';', ',')}" for comment in comments), *attach_statements(location)])


@contextmanager
def read_only(location: LakeLocation) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-only connection to the warehouse (the account's schema in use), closed on exit."""
    lake = connect_lake(location, read_only=True)
    try:
        yield lake.con
    finally:
        lake.close()
