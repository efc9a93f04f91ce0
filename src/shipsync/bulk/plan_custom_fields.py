"""Plan custom field writes from a wide file (a column per api_slug) or a long one
(`entity, api_slug, value`), against the values the warehouse knows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from shipsync.bulk.cells import Cell, cell_text, cell_value
from shipsync.bulk.lookup import Knowledge
from shipsync.bulk.model import Change, Problem
from shipsync.bulk.reader import Sheet
from shipsync.errors import InputError
from shipsync.iso6346 import is_container_number
from shipsync.values import ValueProblem

ENTITY_COLUMNS = ("shipment_id", "container_id", "bill_of_lading", "container_number")
LONG_COLUMNS = ("entity", "entity_type", "api_slug", "value")


@dataclass
class Layout:
    long: bool
    entity_column: str
    slug_columns: list[str]


def layout_of(sheet: Sheet) -> Layout:
    headers = sheet.headers
    if "api_slug" in headers and "value" in headers:
        entity = next((c for c in ("entity", *ENTITY_COLUMNS) if c in headers), None)
        if entity is None:
            raise InputError(f"{sheet.file}: a long file needs an `entity` column (container number, bill of lading or id)")
        extra = [h for h in headers if h not in (*LONG_COLUMNS, *ENTITY_COLUMNS)]
        if extra:
            raise InputError(f"{sheet.file}: unknown column(s) {', '.join(extra)} in a long file ({', '.join(LONG_COLUMNS)})")
        return Layout(True, entity, [])
    entities = [c for c in ENTITY_COLUMNS if c in headers]
    if not entities:
        raise InputError(f"{sheet.file}: no key column; add one of {', '.join(ENTITY_COLUMNS)}")
    if len(entities) > 1:
        raise InputError(f"{sheet.file}: more than one key column ({', '.join(entities)}); keep one")
    return Layout(False, entities[0], [h for h in headers if h != entities[0]])


def unknown_slugs(sheet: Sheet, known: Knowledge) -> list[str]:
    layout = layout_of(sheet)
    return [c for c in layout.slug_columns if c not in known.definitions]


def check_headers(sheet: Sheet, known: Knowledge) -> None:
    if unknown := unknown_slugs(sheet, known):
        raise InputError(
            f"{sheet.file}: column(s) {', '.join(unknown)} name no custom field definition "
            f"(known api_slugs: {', '.join(sorted(known.definitions)) or 'none'})"
        )


def resolve_entity(column: str, text: str, known: Knowledge, entity_type_hint: str = "") -> tuple[str, str]:
    """(entity type, id) for a key cell; ValueProblem names what is missing."""
    key = text.strip()
    upper = key.upper()
    # A number the warehouse knows is valid by definition: look it up before checking its digits.
    if column in ("container_number", "entity") and entity_type_hint != "shipment" and upper in known.containers_by_number:
        return "container", known.containers_by_number[upper]
    if column == "container_number" or (column == "entity" and entity_type_hint != "shipment" and is_container_number(key)):
        if column == "container_number" and not is_container_number(key):
            raise ValueProblem(f"not a container number (ISO 6346: 4 letters, 6 digits, check digit): {key!r}")
        if upper in known.containers_by_number:
            return "container", known.containers_by_number[upper]
        raise ValueProblem(f"container {upper} is not in the warehouse (pull the documents that name it first)")
    if column == "bill_of_lading" or (column == "entity" and upper in known.shipments_by_bill):
        if upper in known.shipments_by_bill:
            return "shipment", known.shipments_by_bill[upper]
        raise ValueProblem(f"bill of lading {upper} is not in the warehouse (pull the documents that name it first)")
    entity_type = {"shipment_id": "shipment", "container_id": "container"}.get(column, entity_type_hint)
    if entity_type in ("shipment", "container"):
        if (entity_type, key) in known.known_entities:
            return entity_type, key
        raise ValueProblem(f"{entity_type} {key} is not in the warehouse")
    for candidate in ("container", "shipment"):
        if (candidate, key) in known.known_entities:
            return candidate, key
    raise ValueProblem(f"{key!r} is not a known container number, bill of lading or id")


def plan(sheet: Sheet, known: Knowledge, *, clear_empty: bool = False) -> tuple[list[Change], list[Problem]]:
    layout = layout_of(sheet)
    index = {h: i for i, h in enumerate(sheet.headers)}
    changes: list[Change] = []
    problems: list[Problem] = []
    seen: dict[tuple[str, str, str], int] = {}
    wide_columns = [(slug, index[slug]) for slug in layout.slug_columns]
    converted: dict[tuple[str, type, Cell], tuple[bool, Any]] = {}
    slug_index, value_index = index.get("api_slug", 0), index.get("value", 0)
    for row, number in zip(sheet.rows, sheet.row_numbers, strict=True):
        if number in sheet.ragged:
            problems.append(Problem(number, "(row)", "", sheet.ragged[number]))
            continue
        key_text = cell_text(row[index[layout.entity_column]])
        if not key_text:
            problems.append(Problem(number, layout.entity_column, "", "the key is empty"))
            continue
        hint = cell_text(row[index["entity_type"]]).strip().lower() if "entity_type" in index else ""
        try:
            entity_type, entity_id = resolve_entity(layout.entity_column, key_text, known, hint)
        except ValueProblem as exc:
            problems.append(Problem(number, layout.entity_column, key_text, str(exc)))
            continue
        # Cells arrive stripped from the reader; the column positions were found once, above.
        cells = (
            [(cell_text(row[slug_index]), row[value_index], "value")] if layout.long else [(slug, row[i], slug) for slug, i in wide_columns]
        )
        for slug, text, column in cells:
            definition = known.definitions.get(slug)
            if definition is None:
                problems.append(Problem(number, "api_slug", slug, "names no custom field definition"))
                continue
            if definition.applies_to != entity_type:
                if text != "":
                    problems.append(Problem(number, column, text, f"{slug} applies to {definition.entity_type}, not a {entity_type}"))
                continue
            where = (entity_type, entity_id, slug)
            current = known.values.get(where)
            if text != "" and where in seen:
                problems.append(Problem(number, column, text, f"the same field of this {entity_type} is set in row {seen[where]}"))
                continue
            if text == "":
                if clear_empty and current is not None:
                    changes.append(Change(number, entity_type, entity_id, slug, "delete", current[1], None, current[0]))
                continue
            # Spreadsheets repeat values (priorities, yes/no, dates, option lists): each distinct
            # (field, cell) is converted and checked once per run (True and 1 are equal keys: the
            # cell's type is part of the key).
            outcome = converted.get((slug, type(text), text))
            if outcome is None:
                try:
                    outcome = (True, cell_value(text, definition.rules, definition.labels))
                except ValueProblem as exc:
                    outcome = (False, str(exc))
                converted[(slug, type(text), text)] = outcome
            if not outcome[0]:
                problems.append(Problem(number, column, text, outcome[1]))
                continue
            value = outcome[1]
            seen[where] = number  # only a valid value claims the field
            if current is None:
                changes.append(
                    Change(
                        number,
                        entity_type,
                        entity_id,
                        slug,
                        "create",
                        None,
                        value,
                        None,
                        payload={"definition_id": definition.id},
                    )
                )
            elif current[1] == value:
                changes.append(Change(number, entity_type, entity_id, slug, "skip", current[1], value, current[0], status="unchanged"))
            else:
                changes.append(
                    Change(
                        number,
                        entity_type,
                        entity_id,
                        slug,
                        "update",
                        current[1],
                        value,
                        current[0],
                        payload={"definition_id": definition.id},
                    )
                )
    return changes, problems
