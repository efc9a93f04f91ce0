"""The options of an enum definition, as one spreadsheet cell says them: `acme; globex=Globex Corp`.

The cell is the whole wanted list, in order: options it does not name are removed, options whose
label or place differs are relabelled or moved, new ones are added. A value without `=Label`
keeps its current label (a new one gets its value in title case).
"""

from __future__ import annotations

from dataclasses import dataclass

from shipsync.bulk.cells import split_list
from shipsync.bulk.lookup import Definition
from shipsync.bulk.model import Change


@dataclass(frozen=True)
class WantedOption:
    value: str
    label: str | None  # None: keep the current label, or derive one
    position: int


def parse_options(text: str) -> tuple[list[WantedOption], list[str]]:
    """The options a cell lists, and the reasons it cannot be read (a value twice, an empty value)."""
    wanted: list[WantedOption] = []
    problems: list[str] = []
    seen: set[str] = set()
    for part in split_list(text):
        value, sep, label = part.partition("=")
        value, label = value.strip(), label.strip()
        if not value:
            problems.append(f"{part!r} names no option value")
        elif value in seen:
            problems.append(f"option {value!r} is listed twice")
        else:
            seen.add(value)
            wanted.append(WantedOption(value, label if sep and label else None, len(wanted)))
    return wanted, problems


def derived_label(value: str) -> str:
    return value.replace("_", " ").title() if value.islower() else value


def new_options(wanted: list[WantedOption]) -> list[dict[str, object]]:
    """What to create for a new definition: each option's label, value and position."""
    return [{"label": o.label or derived_label(o.value), "value": o.value, "position": o.position} for o in wanted]


def _positions(definition: Definition, wanted: list[WantedOption]) -> dict[str, int]:
    """Where each wanted option goes. When the options already there keep their order and new ones
    only follow them, nothing moves (new ones go after the last); otherwise all are renumbered in
    the cell's order, from the definition's first position (0- or 1-based, as the service numbers)."""
    current = sorted(definition.options, key=lambda o: (o.position, o.value))
    wanted_values = [w.value for w in wanted]
    kept = [v for v in wanted_values if v in {o.value for o in current}]
    first_new = next((i for i, v in enumerate(wanted_values) if v not in kept), len(wanted_values))
    in_place = kept == [o.value for o in current if o.value in wanted_values] and wanted_values[first_new:] == [
        v for v in wanted_values if v not in kept
    ]
    if in_place:
        have = {o.value: o.position for o in current}
        after = max(have.values(), default=-1)
        return {v: have[v] if v in have else after + 1 + wanted_values[first_new:].index(v) for v in wanted_values}
    base = current[0].position if current else 0
    return {v: base + i for i, v in enumerate(wanted_values)}


def option_changes(row: int, definition: Definition, wanted: list[WantedOption]) -> list[Change]:
    """Creates, updates and deletes that turn the definition's options into the wanted list."""
    current = {o.value: o for o in definition.options}
    positions = _positions(definition, wanted)
    changes: list[Change] = []
    for option in definition.options:
        if option.value not in positions:
            before = {"label": option.label, "value": option.value, "position": option.position}
            changes.append(Change(row, "custom_field_option", definition.id, option.value, "delete", before, None, option.id))
    for w in wanted:
        have = current.get(w.value)
        if have is None:
            after = {"label": w.label or derived_label(w.value), "value": w.value, "position": positions[w.value]}
            changes.append(Change(row, "custom_field_option", definition.id, w.value, "create", None, after, None))
            continue
        after = {"label": w.label or have.label, "position": positions[w.value]}
        before = {"label": have.label, "position": have.position}
        if after != before:
            changes.append(Change(row, "custom_field_option", definition.id, w.value, "update", before, after, have.id))
    return changes
