"""DuckDB's extensions the lake needs (`ducklake`, `sqlite_scanner`, `postgres_scanner`, `httpfs`),
each loaded from the first place that has it:

1. DuckDB's own extension folder (installed before, by DuckDB or by step 3);
2. DuckDB's extension repository (`INSTALL name`), where it is reachable;
3. the `duckdb-extension-*` wheel installed beside DuckDB (DuckDB's signed builds, from the package
   index): `INSTALL '<file>'` copies it into DuckDB's folder under the name DuckDB loads it by
   (`postgres.duckdb_extension` becomes `postgres_scanner`), so the next load takes step 1.

Connections are made with DuckDB's automatic install and load turned off, so nothing is fetched
behind the project's back and a missing extension is a clear error naming the package to install.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

import duckdb

from shipsync.errors import WarehouseError

# DuckDB options for every connection shipsync makes: nothing installed or loaded implicitly.
NO_AUTOLOAD = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}


@dataclass(frozen=True)
class Extension:
    """An extension by the name DuckDB loads it, and the wheel that carries it."""

    name: str  # what `LOAD` takes
    wheel_module: str  # the wheel's import name (duckdb_extension_postgres)
    file_stem: str  # its file in the wheel (postgres.duckdb_extension)

    @property
    def package(self) -> str:
        return self.wheel_module.replace("_", "-")


DUCKLAKE = Extension("ducklake", "duckdb_extension_ducklake", "ducklake")
SQLITE = Extension("sqlite_scanner", "duckdb_extension_sqlite", "sqlite")
POSTGRES = Extension("postgres_scanner", "duckdb_extension_postgres", "postgres")
HTTPFS = Extension("httpfs", "duckdb_extension_httpfs", "httpfs")


def wheel_file(extension: Extension) -> Path | None:
    """The extension's file in its wheel for this DuckDB, if the wheel is installed."""
    spec = importlib.util.find_spec(extension.wheel_module)
    if spec is None or spec.origin is None:
        return None
    found = Path(spec.origin).parent / "extensions" / f"v{duckdb.__version__}" / f"{extension.file_stem}.duckdb_extension"
    return found if found.is_file() else None


def _try(con: duckdb.DuckDBPyConnection, sql: str) -> bool:
    try:
        con.execute(sql)
    except duckdb.Error:
        return False
    return True


def load(con: duckdb.DuckDBPyConnection, extension: Extension) -> None:
    """Load `extension` on `con` from the first place that has it (see the module's docstring)."""
    if _try(con, f"LOAD {extension.name}"):
        return
    if _try(con, f"INSTALL {extension.name}") and _try(con, f"LOAD {extension.name}"):
        return
    path = wheel_file(extension)
    if path is None:
        raise WarehouseError(
            f"DuckDB's {extension.name} extension is not installed and could not be downloaded: "
            f"install the package {extension.package}=={duckdb.__version__}"
        )
    # The path is the wheel's own file (no data of anyone's in it); a quote would end the literal.
    if "'" in str(path):
        raise WarehouseError(f"cannot install {extension.name} from a path holding a quote: {path}")
    try:
        con.execute(f"INSTALL '{path}'")
        con.execute(f"LOAD {extension.name}")
    except duckdb.Error as exc:
        raise WarehouseError(f"cannot load DuckDB's {extension.name} extension from {path}: {exc}") from None


def load_all(con: duckdb.DuckDBPyConnection, extensions: tuple[Extension, ...]) -> None:
    for extension in extensions:
        load(con, extension)
