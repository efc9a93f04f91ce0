"""The documents a reader opens in the repository resolve: every relative link and anchor of the
README and the data dictionary names a file that exists and a heading it has (anchors as the
repository's web view makes them). The site's own pages are checked by `mkdocs build --strict`
(`tests/docs/test_site.py`, `.ci/run`)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = ("README.md", "warehouse/README.md")

_FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
_CODE = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^()\s]+)(?:\s+\"[^\"]*\")?\)")
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)


def prose(markdown: str) -> str:
    """`markdown` without its code (fenced blocks and inline spans), where nothing is a link."""
    return _CODE.sub("", _FENCE.sub("", markdown))


def links(markdown: str) -> list[str]:
    return _LINK.findall(prose(markdown))


def anchors(markdown: str) -> set[str]:
    """The anchors of a document's headings, as the repository's web view makes them: markup
    dropped, lower case, every character but letters, digits, `_`, `-` and spaces dropped, spaces
    made hyphens; a repeated one gets `-1`, `-2`..."""
    found: set[str] = set()
    for heading in _HEADING.findall(_FENCE.sub("", markdown)):
        text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "").replace("*", "")
        slug = re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")
        candidate, n = slug, 0
        while candidate in found:
            n += 1
            candidate = f"{slug}-{n}"
        found.add(candidate)
    return found


def broken_links(document: Path) -> list[str]:
    """Each relative link of `document` whose file or anchor does not exist, with the reason."""
    broken = []
    for target in links(document.read_text(encoding="utf-8")):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:: not the repository's
            continue
        path, _, anchor = target.partition("#")
        file = (document.parent / path).resolve() if path else document
        if not file.exists():
            broken.append(f"{target}: no such file")
        elif anchor and (file.suffix != ".md" or anchor not in anchors(file.read_text(encoding="utf-8"))):
            broken.append(f"{target}: no heading with that anchor")
    return broken


@pytest.mark.parametrize("name", DOCUMENTS)
def test_every_relative_link_and_anchor_resolves(name: str) -> None:
    document = ROOT / name
    assert links(document.read_text(encoding="utf-8")) or name != "README.md"
    assert broken_links(document) == []


def test_a_broken_file_or_anchor_is_found(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "page.md").write_text("# A page\n\n## Running it: `shipsync up`\n\n## Running it: `shipsync up`\n")
    document = tmp_path / "README.md"
    document.write_text(
        "[ok](docs/page.md#running-it-shipsync-up) [again](docs/page.md#running-it-shipsync-up-1) [here](#top)\n"
        "[gone](docs/gone.md) [no anchor](docs/page.md#running) ![picture](docs/missing.png)\n"
        "`[in code](docs/nowhere.md)` [web](https://example.com/x.md)\n\n# Top\n"
    )
    assert broken_links(document) == [
        "docs/gone.md: no such file",
        "docs/page.md#running: no heading with that anchor",
        "docs/missing.png: no such file",
    ]


def test_ci_runs_the_readme_quickstarts_second_block() -> None:
    """`.ci/run` runs the README's second Quickstart block: the command that runs the tests."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quickstart = readme.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", quickstart, re.DOTALL)
    assert len(blocks) == 2
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    for command in blocks[1].strip().splitlines():
        assert command.strip() in [line.strip() for line in ci], command
