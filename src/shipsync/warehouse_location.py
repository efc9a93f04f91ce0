"""Where the warehouse lives: a DuckLake catalog, the path of its data files, and the schema of the
account, from `SHIPSYNC_WAREHOUSE`, `SHIPSYNC_WAREHOUSE_DATA` and `SHIPSYNC_ACCOUNT`.

- A folder (the default, `warehouse/`): the embedded lake, no server to start. Its catalog is a
  SQLite file, `catalog.sqlite` (DuckLake's choice for several processes on one host), its data
  files are under `data/`, both in the folder.
- `ducklake:postgres:<libpq connection string>`: the catalog in PostgreSQL, for several hosts;
  `SHIPSYNC_WAREHOUSE_DATA` then names the data path all hosts reach (`s3://bucket/prefix/`, with
  credentials and endpoint from the standard AWS variables, or a shared folder). Passwords belong in
  `PGPASSWORD` or `~/.pgpass`; one written in the string (`password=...`, or a URI's
  `postgresql://USER:PASSWORD@HOST/DB`) is masked in every message (`shipsync.redaction`).
- `ducklake:sqlite:<file>`: a SQLite catalog elsewhere (data beside it, or SHIPSYNC_WAREHOUSE_DATA).

Several accounts share one lake, each in its own schema (`SHIPSYNC_ACCOUNT`, default `main`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from shipsync.errors import ConfigError
from shipsync.redaction import mask_credentials, register_credentials_in

CATALOG_FILE = "catalog.sqlite"
DATA_FOLDER = "data"
DEFAULT_SCHEMA = "main"
_SCHEMA = re.compile(r"[a-z][a-z0-9_]{0,62}")


@dataclass(frozen=True)
class ObjectStorage:
    """Credentials and endpoint of S3-compatible storage (the settings read them from the standard AWS
    variables: `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `AWS_REGION` or
    `AWS_DEFAULT_REGION`, `AWS_ENDPOINT_URL`); given to DuckDB as a temporary secret, in memory only."""

    key_id: str | None = None
    secret: str | None = field(default=None, repr=False)
    session_token: str | None = field(default=None, repr=False)
    region: str | None = None
    endpoint_url: str | None = None


@dataclass(frozen=True)
class LakeLocation:
    """A DuckLake: its catalog (as DuckLake names it after `ducklake:`), its data path, the schema
    of this account, the local folder of an embedded lake (None beyond one host), and the object
    storage credentials when the data path is a bucket."""

    catalog: str
    data_path: str
    schema: str = DEFAULT_SCHEMA
    folder: Path | None = None
    storage: ObjectStorage | None = field(default=None, repr=False)

    @property
    def catalog_kind(self) -> Literal["sqlite", "postgres"]:
        return "postgres" if self.catalog.startswith("postgres:") else "sqlite"

    @property
    def sqlite_file(self) -> Path | None:
        return Path(self.catalog.removeprefix("sqlite:")) if self.catalog_kind == "sqlite" else None

    @property
    def on_object_storage(self) -> bool:
        return self.data_path.startswith(("s3://", "s3a://", "gcs://", "gs://", "r2://"))

    @property
    def data_in_folder(self) -> bool:
        """Whether the data files live in the embedded lake's own folder (`data/`)."""
        return self.folder is not None and self.data_path == _folder_data(self.folder)

    def exists(self) -> bool:
        """Whether there is a lake here already (a local catalog file; a PostgreSQL one is assumed)."""
        file = self.sqlite_file
        return file.is_file() if file is not None else True

    def __repr__(self) -> str:
        catalog, data = mask_credentials(self.catalog), mask_credentials(self.data_path)
        return f"LakeLocation(catalog={catalog!r}, data_path={data!r}, schema={self.schema!r}, folder={self.folder!r})"

    def describe(self) -> str:
        """The catalog and data path for messages, every credential written in them masked."""
        return f"ducklake:{mask_credentials(self.catalog)} (data {mask_credentials(self.data_path)}, schema {self.schema})"


def _folder_data(folder: Path) -> str:
    return str(folder / DATA_FOLDER) + "/"


def schema_name(account: str | None) -> str:
    """The lake schema of an account: SHIPSYNC_ACCOUNT as it is (lower-case letters, digits, `_`)."""
    if not account:
        return DEFAULT_SCHEMA
    if not _SCHEMA.fullmatch(account):
        raise ConfigError(
            f"SHIPSYNC_ACCOUNT={account!r}: an account is a schema of the lake: use lower-case letters, digits and '_', "
            "starting with a letter (at most 63 characters)"
        )
    return account


def lake_location(
    warehouse: str, data: str | None = None, account: str | None = None, storage: ObjectStorage | None = None
) -> LakeLocation:
    """The lake that SHIPSYNC_WAREHOUSE (`warehouse`), SHIPSYNC_WAREHOUSE_DATA (`data`) and
    SHIPSYNC_ACCOUNT (`account`) name, with `storage`'s credentials when its data lives in a
    bucket; a ConfigError naming the variable when they cannot be one."""
    register_credentials_in(warehouse, data)
    location = _located(warehouse, data, schema_name(account))
    if location.on_object_storage:
        location = replace(location, storage=storage or ObjectStorage())
    return location


def _located(warehouse: str, data: str | None, schema: str) -> LakeLocation:
    text = warehouse.strip()
    if not text:
        raise ConfigError("SHIPSYNC_WAREHOUSE is empty: give a folder (the default is warehouse/) or ducklake:postgres:...")
    if text.startswith("ducklake:"):
        catalog = text.removeprefix("ducklake:")
        if catalog.startswith("postgres:"):
            if not data:
                raise ConfigError(
                    "SHIPSYNC_WAREHOUSE_DATA is not set: a PostgreSQL catalog needs the data path every host reaches "
                    "(s3://bucket/prefix/ or a shared folder)"
                )
            return LakeLocation(catalog, _data_path(data), schema)
        if catalog.startswith("sqlite:"):
            file = Path(catalog.removeprefix("sqlite:")).expanduser().resolve()
            return LakeLocation(f"sqlite:{file}", _data_path(data) if data else _folder_data(file.parent), schema, file.parent)
        raise ConfigError(
            f"SHIPSYNC_WAREHOUSE={mask_credentials(text)!r}: shipsync's lakes have a sqlite: or postgres: catalog "
            "(ducklake:sqlite:FILE or ducklake:postgres:CONNECTION), or give a folder"
        )
    folder = Path(text).expanduser().resolve()
    if folder.is_file():
        raise ConfigError(
            f"SHIPSYNC_WAREHOUSE={text}: is a file (a warehouse of the old layout?); the warehouse is a DuckLake folder now: "
            f"set SHIPSYNC_WAREHOUSE to a folder and copy the file in with `shipsync warehouse import {text}`"
        )
    return LakeLocation(f"sqlite:{folder / CATALOG_FILE}", _data_path(data) if data else _folder_data(folder), schema, folder)


def _data_path(data: str) -> str:
    text = data.strip()
    if "://" in text:
        return text if text.endswith("/") else text + "/"
    return str(Path(text).expanduser().resolve()) + "/"
