"""An analyst outside shipsync's environment, as docs/analysts.md walks them: a fresh virtual
environment with the pinned DuckDB and its extension wheels from the package index, the extensions
installed from the wheels (or loaded from them by path), the statements `--print-attach` printed,
and a query into pandas. The page's blocks run as written, in order, with an empty home folder (no
DuckDB extension installed before) and Python's warnings as errors (`.df()` printed a
`Pandas4Warning` per time zone column)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.lake import analyst
from support.sandboxes import SandboxFactory, pulled_sandbox

pytestmark = pytest.mark.slow  # a virtual environment installed from the package index: a minute
ANALYSTS_PAGE = Path(__file__).resolve().parents[2] / "docs" / "analysts.md"
WALK = re.compile(r"<!-- walk: ([a-z ,]+) -->\n```(sh|python)\n(.*?)```", re.DOTALL)


def walk() -> list[tuple[str, str, str]]:
    """The page's walk: (who and where, language, code) of each block, in order."""
    return [(who, language, code) for who, language, code in WALK.findall(ANALYSTS_PAGE.read_text())]


@pytest.fixture(scope="module")
def lake(make_module_sandbox: SandboxFactory, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    where = tmp_path_factory.mktemp("walk") / "warehouse"
    pulled_sandbox(make_module_sandbox(), where)
    yield where


def analyst_env(home: Path) -> dict[str, str]:
    """A machine with Python and pip (configured as this one's) and nothing of shipsync's."""
    python_bin = Path(sys.base_prefix) / "bin"
    env = {name: value for name, value in os.environ.items() if name.startswith("PIP_") or name in ("LANG", "TMPDIR")}
    cache = Path(os.environ.get("HOME", "/root")) / ".cache" / "pip"  # this machine's download cache: only the time differs
    return env | {"HOME": str(home), "PATH": f"{python_bin}:/usr/bin:/bin", "PIP_CACHE_DIR": str(cache)}


def test_the_documented_walk_opens_the_lake_from_a_plain_pip_install(lake: Path, tmp_path: Path) -> None:
    steps = walk()
    assert [who for who, _, _ in steps] == [
        "analyst shell",
        "analyst python",
        "operator shell",
        "analyst python",
        "analyst python, empty home",
    ]
    work = tmp_path / "analyst"
    work.mkdir()
    homes = {"": tmp_path / "home", ", empty home": tmp_path / "empty-home"}
    for home in homes.values():
        home.mkdir()
    operator = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}", "SHIPSYNC_WAREHOUSE": str(lake)}
    outputs = []
    for who, language, code in steps:
        home = homes[who.removeprefix("analyst python").removeprefix("analyst shell")] if who.startswith("analyst") else None
        env = analyst_env(home) if home is not None else operator
        if language == "sh":
            command = ["bash", "-euo", "pipefail", "-c", code]
        else:
            command = [str(work / "lake-env" / "bin" / "python"), "-W", "error", "-"]
        done = subprocess.run(command, input=code if language == "python" else None, cwd=work, env=env, capture_output=True, text=True)
        assert done.returncode == 0, f"{who}:\n{code}\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
        outputs.append(done.stdout)

    with analyst(lake) as con:
        containers = con.execute("SELECT count(*) FROM container_status").fetchone()
    assert containers is not None and containers[0] > 0
    assert outputs[3] == f"{containers[0]} containers\n" and outputs[4] == f"{containers[0]} containers\n"
    # The analyst's DuckDB is the pinned one, and step 2 put the extensions under their load names.
    installed = tmp_path / "home" / ".duckdb" / "extensions"
    assert {p.name for p in installed.rglob("*.duckdb_extension")} == {
        f"{name}.duckdb_extension" for name in ("ducklake", "sqlite_scanner", "postgres_scanner", "httpfs")
    }
    assert not any((tmp_path / "empty-home").rglob("*.duckdb_extension"))
