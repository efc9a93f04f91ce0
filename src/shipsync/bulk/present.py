"""How an undo judges a before-image against the present: the value the service has now (read at
the start of the undo) is compared with what the undone run left (its after-image).

- The present is the run's after-image: nobody changed it since, so the before-image goes back.
- The present is the before-image: it is as it was before the run already (put back by someone,
  or the run's write never happened: a run killed while sending), so nothing is sent: `unchanged`.
- Anything else: someone changed it since the run, and their value stays: `skipped`, saying both
  values. A later `apply undo` of the same run tries the skipped ones again.
"""

from __future__ import annotations

from typing import Any

from shipsync.bulk.model import Change, UndoImage
from shipsync.json_text import dumps

AS_BEFORE = "already as it was before the run"


def same_value(a: Any, b: Any) -> bool:
    """Equal as the service's JSON values: 2 and 2.0 are, `true` and 1 are not."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    return bool(a == b)


def shown(value: Any) -> str:
    """A value as an undo's messages show it: its JSON (`none` when there is none)."""
    return "none" if value is None else dumps(value)


def as_before(row: int, image: UndoImage, detail: str = AS_BEFORE) -> Change:
    """Nothing to put back: the present is the before-image already."""
    return Change(
        row, image.entity_type, image.entity_id, image.field, "skip", image.before, image.before, image.resource_id, "unchanged", detail
    )


def changed_since(row: int, image: UndoImage, now: Any) -> Change:
    """Left alone: someone changed it at the service since the run."""
    detail = f"changed at the service since the run: it is {shown(now)} now, the run left {shown(image.after)}; left as it is"
    return Change(row, image.entity_type, image.entity_id, image.field, "skip", now, now, image.resource_id, "skipped", detail)
