"""The shell blocks the docs show, for tests that run them as written."""

from __future__ import annotations

import re
from pathlib import Path


def docs_block(page: Path, heading: str) -> str:
    """The first ```sh block after the line `heading` on `page`, each line without its comment."""
    text = page.read_text()
    block = re.search(r"```sh\n(.*?)```", text[text.index(f"\n{heading}\n") :], re.S)
    assert block, f"no sh block after {heading!r} in {page.name}"
    return "\n".join(line.split("  #")[0].rstrip() for line in block.group(1).splitlines())
