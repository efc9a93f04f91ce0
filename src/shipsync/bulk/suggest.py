"""The closest name to a misspelt one: a header a kind does not take, or a field the account has
not defined, is named with the one it most likely means (`prioirty (did you mean priority?)`),
never with every name there is."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence

LIKENESS = 0.75  # difflib's ratio: `prioirty` and `priority` are 0.88, `po_number` and `priority` 0.35


def closest(name: str, candidates: Iterable[str]) -> str | None:
    """The candidate `name` most likely means, if one is spelled much like it."""
    found = difflib.get_close_matches(name, list(candidates), n=1, cutoff=LIKENESS)
    return found[0] if found else None


def with_suggestions(names: Sequence[str], candidates: Iterable[str]) -> str:
    """`prioirty (did you mean priority?), zzz`: each name, with the candidate it likely means."""
    pool = list(candidates)
    return ", ".join(f"{name} (did you mean {match}?)" if (match := closest(name, pool)) else name for name in names)
