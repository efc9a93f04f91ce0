"""A definition's `pattern`, matched without letting a pattern hang the process (ReDoS).

Python's `re` backtracks: `(a+)+$` against 34 `a`s and a `!` takes minutes. Patterns run on RE2
(google-re2), which matches in time linear in the text whatever the pattern, so no pattern it
accepts can hang. RE2 refuses what needs backtracking (back-references, lookarounds, `\\Z`); those
patterns run on the `regex` module with a time limit per value. A pattern that runs out of time
is refused for every later value too (it would cost the limit on each of a million rows): matching
raises PatternTooSlow, which the value's check reports as its problem, so nothing unchecked is sent.

RE2 differs from `re` in small ways: `\\d`, `\\w`, `\\s` and `\\b` are ASCII-only (use `\\p{N}`,
`\\p{L}` for Unicode), and `re`'s `(?P<name>)` syntax is accepted. Patterns that neither engine
compiles raise `re.error`, which callers treat as the service's problem, not the value's.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import re2
import regex

TIME_LIMIT = 0.05  # seconds per value, for the patterns only the backtracking engine runs
_too_slow: set[str] = set()
_QUIET = re2.Options()
_QUIET.log_errors = False  # a pattern RE2 refuses is expected here, not worth a line on stderr


class PatternTooSlow(ValueError):
    """Whether the text matches cannot be told in time: the pattern backtracks past the limit."""


@lru_cache(maxsize=1024)
def _compiled(pattern: str) -> tuple[str, Any]:
    """("re2", compiled) when RE2 takes the pattern, else ("regex", compiled)."""
    try:
        # Compiled from UTF-8 bytes and matched on UTF-8 bytes: the same answers as for str, without
        # the wrapper's per-call offset bookkeeping, which a million cells would each pay.
        return "re2", re2.compile(pattern.encode("utf-8", "surrogatepass"), _QUIET)
    except re2.error:
        pass
    try:
        return "regex", regex.compile(pattern)
    except regex.error as exc:
        raise re.error(str(exc)) from None


def fullmatch(pattern: str, text: str) -> bool:
    """Whether the whole of `text` matches `pattern`; PatternTooSlow when it cannot be told in time."""
    engine, compiled = _compiled(pattern)
    if engine == "re2":
        return compiled.fullmatch(text.encode("utf-8", "surrogatepass")) is not None
    if pattern not in _too_slow:
        try:
            return compiled.fullmatch(text, timeout=TIME_LIMIT) is not None
        except TimeoutError:
            _too_slow.add(pattern)
    raise PatternTooSlow(f"the pattern {pattern} takes too long to check (over {TIME_LIMIT:g} s: it backtracks); fix the definition")
