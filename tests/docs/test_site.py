"""The documentation site builds in strict mode, and its configuration makes each kind of break an
error: a broken link, a broken anchor, a page the nav names that is missing, a page the nav leaves
out (MkDocs' `validation` settings make them warnings, `strict` makes warnings errors)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from support.waiting import HANG_S

ROOT = Path(__file__).resolve().parents[2]


def build(project: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=HANG_S,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )


def copy_of_the_site(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    shutil.copytree(ROOT / "docs", project / "docs")
    shutil.copy(ROOT / "mkdocs.yml", project / "mkdocs.yml")
    (project / "warehouse").mkdir()
    shutil.copy(ROOT / "warehouse" / "README.md", project / "warehouse" / "README.md")
    return project


def _append(page: str, text: str) -> Callable[[Path], None]:
    def change(project: Path) -> None:
        with (project / "docs" / page).open("a", encoding="utf-8") as out:
            out.write(text)

    return change


BREAKS: dict[str, tuple[Callable[[Path], None], str]] = {
    "a broken link": (_append("index.md", "\n[gone](gone.md)\n"), "gone.md"),
    "a broken anchor": (_append("index.md", "\n[nowhere](analysts.md#nowhere)\n"), "#nowhere"),
    "a missing page": (lambda project: (project / "docs" / "pulls.md").unlink(), "pulls.md"),
    "a page left out of the nav": (lambda project: (project / "docs" / "orphan.md").write_text("# Orphan\n"), "orphan.md"),
    "a missing include": (lambda project: (project / "warehouse" / "README.md").unlink(), "README.md"),
}


@pytest.mark.slow
def test_the_site_builds_strict(tmp_path: Path) -> None:
    built = build(ROOT, tmp_path / "site")
    assert built.returncode == 0, built.stderr[-3000:]
    assert (tmp_path / "site" / "warehouse" / "index.html").read_text(encoding="utf-8").count("container_status") > 1


@pytest.mark.slow
@pytest.mark.parametrize("kind", BREAKS)
def test_each_kind_of_break_fails_the_build(kind: str, tmp_path: Path) -> None:
    project = copy_of_the_site(tmp_path)
    change, named = BREAKS[kind]
    change(project)
    built = build(project, tmp_path / "site")
    assert built.returncode != 0 and named in built.stderr, built.stderr[-3000:]
