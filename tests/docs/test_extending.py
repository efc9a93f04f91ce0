"""docs/extending.md shows the repository's own code: each block marked `<!-- from PATH -->` is
found, line for line, in PATH; and its worked example of a pulled resource, `parties`, touches at
most four product files (tests/pull/test_parties.py pulls it from the sandbox)."""

from __future__ import annotations

import re
import subprocess
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "extending.md"
# A fragment that is not a whole statement is kept from the formatter (`<!-- fmt:off -->`).
MARKED_BLOCK = re.compile(r"<!-- from (\S+) -->\n(?:<!-- fmt:off -->\n)?```[a-z]*\n(.*?)```", re.S)
PRODUCT = ("src/shipsync/", "flows/", "prefect.yaml")
# What names the parties example in the product: its model, its deployment and its flow.
PARTIES = r"Party|pull-parties|pull_parties"


def marked_blocks(text: str) -> list[tuple[str, str]]:
    return [(path, block) for path, block in MARKED_BLOCK.findall(text)]


def shown_in(block: str, text: str) -> bool:
    """Whether the block's lines are consecutive lines of `text`, indented alike (by any amount)."""
    wanted = textwrap.dedent(block).splitlines()
    lines = text.splitlines()
    return any(textwrap.dedent("\n".join(lines[i : i + len(wanted)])).splitlines() == wanted for i in range(len(lines)))


def section(text: str, heading: str) -> str:
    return text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]


def test_every_block_is_the_repositorys_own_code() -> None:
    blocks = marked_blocks(PAGE.read_text())
    assert len(blocks) >= 8
    stale = [f"{path}: {block.splitlines()[0].strip()}" for path, block in blocks if not shown_in(block, (ROOT / path).read_text())]
    assert not stale, f"docs/extending.md shows code its file no longer has: {stale}"


def test_a_changed_file_makes_its_block_stale() -> None:
    path, block = marked_blocks(PAGE.read_text())[0]
    text = (ROOT / path).read_text()
    assert shown_in(block, text)
    assert not shown_in(block, text.replace("company_name", "name"))


def test_the_page_covers_the_four_common_changes() -> None:
    headings = re.findall(r"^## (.+)$", PAGE.read_text(), flags=re.M)
    assert headings == ["A pulled resource", "A kind of spreadsheet", "A webhook event kind", "A view"]


def test_the_parties_example_touches_at_most_four_product_files() -> None:
    shown = {path for path, _ in marked_blocks(section(PAGE.read_text(), "A pulled resource")) if path.startswith(PRODUCT)}
    found = subprocess.run(
        ["git", "grep", "-l", "-w", "-E", PARTIES, "--", *PRODUCT], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    assert set(found) == shown, "the product names parties where the extending page does not show it"
    assert len(shown) <= 4
