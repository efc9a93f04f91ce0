"""The product's voice: every comment and docstring in `src/shipsync` says what holds and why.

A figure measured on some machine (a duration, a size, a ratio such as `4x`) and the word "measured"
belong in `docs/benchmarks.md`, beside the command that reproduces them. A bound's value belongs
in a code constant, which a comment may explain by what it bounds. Text in backticks is code or
output shown as an example (`45 s`), not a claim, and is not read.

Read from the source: comments from the tokens, docstrings (and any other bare string statement)
from the syntax tree. A failure names each offending line and the figure it quotes.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PRODUCT = ROOT / "src" / "shipsync"

# Files other branches were rewriting when this test came: each still quotes a figure, and the
# lead rewrites it after merging them. A file here whose prose is clean fails (strict xfail), so
# the set only shrinks; the aim is an empty set.
PENDING: frozenset[str] = frozenset()

MEASURED = re.compile(r"\b(?:re-?)?measured\b", re.IGNORECASE)
_NUMBER = r"~?\d[\d,]*(?:\.\d+)?(?:\s?[-–]\s?\d[\d,]*(?:\.\d+)?)?"
# A number with a unit of time or size (a unit of time only after a space, so `429s` is a count
# of answers), or a ratio (`4x`, `1.45x`).
FIGURE = re.compile(
    rf"(?<![\w.]){_NUMBER}"
    r"(?:\s?(?:ms|µs|ns|[KMGT]i?B|kB)\b|\s(?:s|min|(?:milli)?seconds?|minutes?|hours?|[mg]egabytes?)\b|(?<=\d)x\b)"
)
CODE_SPAN = re.compile(r"`[^`\n]*`")


def prose(path: Path) -> Iterator[tuple[int, str]]:
    """(line, text) of every comment and every line of every bare string statement in `path`."""
    source = path.read_text(encoding="utf-8")
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            for offset, line in enumerate(node.value.value.splitlines()):
                yield node.lineno + offset, line


def quoted_figures(text: str) -> list[str]:
    """The measurements `text` quotes: the word "measured", and figures with units or ratios."""
    plain = CODE_SPAN.sub("CODE", text)
    return [m.group(0) for m in MEASURED.finditer(plain)] + [m.group(0).strip() for m in FIGURE.finditer(plain)]


def findings(path: Path) -> list[str]:
    rel = path.relative_to(PRODUCT)
    return [f"{rel}:{line}: {figures} in {text.strip()!r}" for line, text in sorted(prose(path)) if (figures := quoted_figures(text))]


def product_files() -> list[Path]:
    return sorted(PRODUCT.rglob("*.py"))


def _param(path: Path) -> object:
    rel = path.relative_to(PRODUCT).as_posix()
    if rel in PENDING:
        return pytest.param(path, id=rel, marks=pytest.mark.xfail(strict=True, reason="pending: the lead rewrites it after merging"))
    return pytest.param(path, id=rel)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("# One catalog query per table cost ~40 ms each.", ["~40 ms"]),
        ("one insert of 91,000 containers took 850 MB", ["850 MB"]),
        ("loading them costs 0.35-0.45 s per DuckDB", ["0.35-0.45 s"]),
        ("a 16,384-column XLSX of 300 rows took 6 s and 410 MB to read", ["6 s", "410 MB"]),
        ("a 1 MiB body parses into ~37 MB; the lines cost ~1 µs each", ["1 MiB", "~37 MB", "~1 µs"]),
        ("the wrapper's bookkeeping (4x faster)", ["4x"]),
        ("(measured on DuckLake 1.5.5) Re-measured with the machine loaded", ["measured", "Re-measured"]),
        ("stops them all within 10 s.", ["10 s"]),
        ("the retries span ~7 minutes", ["~7 minutes"]),
        # counts, modes, versions, formats shown in backticks and figures without units are not figures
        ("requests, 429s and 404s per day", []),
        ("created 0700, files 0600, DuckLake 1.5.5, ISO 8601", []),
        ("`45 s`, `12 min`, `2 h 05 min`: how long a wait is", []),
        ("one request per 100 shipments; a million rows of 8 fields", []),
        ("the workbook limits measure what it would expand to", []),
    ],
)
def test_a_measurement_is_recognised(text: str, expected: list[str]) -> None:
    assert quoted_figures(text) == expected


@pytest.mark.parametrize("path", [_param(path) for path in product_files()])
def test_no_comment_or_docstring_quotes_a_measurement(path: Path) -> None:
    found = findings(path)
    assert not found, "say what holds and why; figures go to docs/benchmarks.md:\n" + "\n".join(found)


def test_every_pending_file_exists() -> None:
    missing = sorted(rel for rel in PENDING if not (PRODUCT / rel).is_file())
    assert not missing, f"no longer in the product, drop from PENDING: {missing}"
