"""Hostile names and values (issue 27, item 2): text built to end the quotes of whatever SQL it is
pasted into and add a statement of its own. Each added statement leaves a mark if it ever runs (a
canary file, a `.pth` file such as the one the probe planted in the virtual environment, a table),
so a test proves that nothing ran by finding no mark. The files are named relative to the working
folder (a name holding no `/` can be a folder entry too): tests run with `folder` as that."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb

CANARY_TABLE = "shipsync_canary"
# The longest name a file system takes in one folder entry (bytes): longer names are only data.
MAX_ENTRY = 255


@dataclass(frozen=True)
class Canaries:
    """The marks an injected statement would leave, all inside `folder`."""

    folder: Path  # the working folder of the test

    @property
    def file(self) -> Path:
        return self.folder / "canary.csv"

    @property
    def pth(self) -> Path:
        return self.folder / "shipsync_canary.pth"

    def statement(self) -> str:
        """What every hostile name tries to run: write both files, then create the canary table."""
        return (
            f"COPY (SELECT 'import os') TO '{self.file.name}' (FORMAT csv); "
            f"COPY (SELECT 'import os; os.system(1)') TO '{self.pth.name}' (FORMAT csv, HEADER false); "
            f"CREATE TABLE {CANARY_TABLE} AS SELECT 1 AS owned"
        )

    def names(self) -> list[str]:
        """The corpus: quotes of every kind DuckDB reads (and look-alikes it does not), comments,
        statement ends, NUL, line breaks, bidirectional and zero-width characters, parameter and
        format placeholders, a very long name, path traversal and `.pth` names."""
        run = self.statement()
        return [
            f"x'; {run}; --",
            f'x"; {run}; --',
            f"x'); {run}; --",
            f'x"); {run}; --',
            f"x')); {run}; --",
            f"x\\'; {run}; --",
            f"*/ {run}; /*",
            f"x' /* ; {run}; */ --",
            f"$$; {run}; $$",
            f"$tag$; {run}; $tag$",
            f"x\n; {run};\n--",
            f"x\r\n'; {run}; --",
            f"x\x00'; {run}; --",
            f"x\u02bc; {run}; --",  # modifier letter apostrophe
            f"x\uff07; {run}; --",  # fullwidth apostrophe
            f"x\uff02; {run}; --",  # fullwidth quotation mark
            f"x\u2019; {run}; --",  # right single quotation mark
            f"x\u202e'; {run}; --",  # right-to-left override
            f'x\u200b"; {run}; --',  # zero-width space
            "'" * 64,
            '"' * 64,
            run,
            "a" * 100_000 + f"'; {run}; --",
            "../../../../../../tmp/shipsync_canary",
            "..",
            "/etc/passwd",
            "shipsync_canary.pth",
            f"x.pth'; {run}; --",
            "? $1 $name $values $stamped {scope} {0} %s %(x)s",
            "NULL",
            "main",
            "DROP TABLE documents",
        ]

    def entry_names(self) -> list[str]:
        """The names a folder entry can have (no NUL or `/`, at most MAX_ENTRY bytes)."""
        return [n for n in self.names() if "\x00" not in n and "/" not in n and n not in (".", "..") and len(n.encode()) <= MAX_ENTRY]

    def fired(self, *connections: duckdb.DuckDBPyConnection) -> list[str]:
        """The marks that exist: files in the folder, and the canary table in any of `connections`."""
        found = [p.name for p in (self.file, self.pth) if p.exists()]
        for con in connections:
            tables = con.execute("SELECT database_name, schema_name FROM duckdb_tables() WHERE table_name = ?", [CANARY_TABLE]).fetchall()
            found += [f"{database}.{schema}.{CANARY_TABLE}" for database, schema in tables]
        return found
