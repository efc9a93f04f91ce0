"""The custom-fields kind: values on shipments, containers and tracking requests, from a wide file (a
column per api_slug) or a long one (`entity, api_slug, value`), against the values the warehouse
knows. Keys: `container_number`, `bill_of_lading`, `request_number`, or `container_id`,
`shipment_id`, `tracking_request_id`.

A value is created, updated or deleted, reconciling with what the service has: a create the service
refuses as a duplicate (a value exists already for that entity and slug, perhaps from a create whose
answer was lost) is found through the entity's own custom-field route and updated instead. The value
written goes to the warehouse as sent, with what the answer adds. Undo deletes what was created,
patches back what was changed and creates again what was removed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import duckdb

from shipsync import iso6346
from shipsync.api import AsyncShipsyncClient
from shipsync.api.account_models import CustomField
from shipsync.api.jsonapi import JsonObject
from shipsync.bulk.cells import Cell, cell_text, cell_value
from shipsync.bulk.kind import RefreshRequest, Scope, tracking_since, unresolved_numbers
from shipsync.bulk.lookup import Definition, Knowledge
from shipsync.bulk.model import Action, Change, KindName, Problem, UndoImage
from shipsync.bulk.present import as_before, changed_since, same_value
from shipsync.bulk.read_values import ValueScope
from shipsync.bulk.reader import Sheet
from shipsync.bulk.reflect import Reflection
from shipsync.bulk.refresh import definitions_fresh
from shipsync.bulk.suggest import closest, with_suggestions
from shipsync.errors import InputError, NotFoundError, ValidationError
from shipsync.iso6346 import is_container_number
from shipsync.values import ValueProblem
from shipsync.warehouse.declared_rows import declared_tables_batch

ENTITY_COLUMNS = ("shipment_id", "container_id", "tracking_request_id", "bill_of_lading", "container_number", "request_number")
LONG_COLUMNS = ("entity", "entity_type", "api_slug", "value")
ID_COLUMNS = {"shipment_id": "shipment", "container_id": "container", "tracking_request_id": "tracking_request"}
ENTITY_HINTS = {"shipment": "shipment", "container": "container", "cargo": "container", "tracking_request": "tracking_request"}


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
            unknown = with_suggestions(extra, (*LONG_COLUMNS, *ENTITY_COLUMNS))
            raise InputError(f"{sheet.file}: unknown column(s) {unknown} in a long file ({', '.join(LONG_COLUMNS)})")
        return Layout(True, entity, [])
    entities = [c for c in ENTITY_COLUMNS if c in headers]
    if not entities:
        meant = next(((h, m) for h in headers if (m := closest(h, ENTITY_COLUMNS))), None)
        hint = f" (is {meant[0]} meant to be {meant[1]}?)" if meant else ""
        raise InputError(f"{sheet.file}: no key column{hint}; add one of {', '.join(ENTITY_COLUMNS)}")
    if len(entities) > 1:
        raise InputError(f"{sheet.file}: more than one key column ({', '.join(entities)}); keep one")
    return Layout(False, entities[0], [h for h in headers if h != entities[0]])


def unknown_slugs(sheet: Sheet, known: Knowledge) -> list[str]:
    layout = layout_of(sheet)
    return [c for c in layout.slug_columns if c not in known.definitions]


def check_headers(sheet: Sheet, known: Knowledge) -> None:
    if unknown := unknown_slugs(sheet, known):
        named = with_suggestions(unknown, known.definitions)
        listing = (
            ""
            if "did you mean" in named
            else f" ({len(known.definitions)} are defined; `shipsync sql -c 'SELECT api_slug FROM custom_field_definitions'` lists them)"
        )
        raise InputError(f"{sheet.file}: column(s) {named} name no custom field definition{listing}")


def only_one(entity_type: str, key_name: str, key: str, ids: list[str]) -> str:
    """The one record a natural key names; a key naming several (a container number on two trips,
    a bill of lading on two shipments) is refused with the candidates, never resolved to one."""
    if len(ids) == 1:
        return ids[0]
    shown = ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
    raise ValueProblem(f"{len(ids)} {entity_type}s have the {key_name} {key} ({shown}): name one by its {entity_type}_id column instead")


def _request(key: str, known: Knowledge) -> tuple[str, str]:
    ids = known.tracking_by_number.get(key.upper(), [])
    if ids:
        return "tracking_request", only_one("tracking_request", "request number", key, ids)
    raise ValueProblem(f"tracking request {key} is not known (checked the warehouse and the service)")


def resolve_entity(column: str, text: str, known: Knowledge, entity_type_hint: str = "") -> tuple[str, str]:
    """(entity type, id) for a key cell; ValueProblem names what is missing. A container number is
    read however it is written (`akpu 354575-9` is `AKPU3545759`)."""
    key = text.strip()
    if column == "container_number" or (column == "entity" and is_container_number(key)):
        key = iso6346.normalized(key)
    upper = key.upper()
    hint = ENTITY_HINTS.get(entity_type_hint.strip().lower().replace(" ", "_"), entity_type_hint)
    if column == "request_number" or (column == "entity" and hint == "tracking_request" and upper in known.tracking_by_number):
        return _request(key, known)
    # A number the warehouse knows is valid by definition: look it up before checking its digits.
    if column in ("container_number", "entity") and hint in ("", "container") and upper in known.containers_by_number:
        return "container", only_one("container", "number", upper, known.containers_by_number[upper])
    if column == "container_number" or (column == "entity" and hint in ("", "container") and is_container_number(key)):
        if column == "container_number" and (why := iso6346.problem(key)) is not None:
            raise ValueProblem(f"{why}: {text.strip()!r}")
        raise ValueProblem(f"container {upper} is not in the warehouse (pull the documents that name it first)")
    if column == "bill_of_lading" or (column == "entity" and hint in ("", "shipment") and upper in known.shipments_by_bill):
        if upper in known.shipments_by_bill:
            return "shipment", only_one("shipment", "bill of lading", upper, known.shipments_by_bill[upper])
        raise ValueProblem(f"bill of lading {upper} is not in the warehouse (pull the documents that name it first)")
    entity_type = ID_COLUMNS.get(column, hint)
    if entity_type in ("shipment", "container", "tracking_request"):
        if (entity_type, key) in known.known_entities:
            return entity_type, key
        if entity_type == "tracking_request" and upper in known.tracking_by_number:
            return _request(key, known)
        raise ValueProblem(f"{entity_type.replace('_', ' ')} {key} is not in the warehouse")
    for candidate in ("container", "shipment", "tracking_request"):
        if (candidate, key) in known.known_entities:
            return candidate, key
    if upper in known.tracking_by_number:
        return _request(key, known)
    raise ValueProblem(f"{key!r} is not a known container number, bill of lading, request number or id")


def _needs_tracking_requests(sheet: Sheet) -> bool:
    layout = layout_of(sheet)
    if layout.entity_column in ("request_number", "tracking_request_id"):
        return True
    if layout.long and "entity_type" in sheet.headers:
        index = sheet.headers.index("entity_type")
        return any(ENTITY_HINTS.get(cell_text(row[index]).strip().lower().replace(" ", "_")) == "tracking_request" for row in sheet.rows)
    return False


def _long_file_request_numbers(sheet: Sheet, known: Knowledge) -> list[str]:
    """Keys of a long file's rows whose field lives on tracking requests (its definition says so),
    that the warehouse cannot resolve yet: they are read from the service by number."""
    layout = layout_of(sheet)
    if not layout.long:
        return []
    key_index, slug_index = sheet.headers.index(layout.entity_column), sheet.headers.index("api_slug")
    numbers: set[str] = set()
    for row in sheet.rows:
        if max(key_index, slug_index) >= len(row):
            continue  # a ragged row: the plan reports it
        definition, key = known.definitions.get(cell_text(row[slug_index])), cell_text(row[key_index]).strip()
        on_requests = definition is not None and definition.applies_to == "tracking_request"
        if on_requests and key and key.upper() not in known.tracking_by_number and ("tracking_request", key) not in known.known_entities:
            numbers.add(key)
    return sorted(numbers)


class CustomFieldValues:
    name: KindName = "custom-fields"
    scope = Scope(entities=True, tracking=True)
    undoable = True

    # Planning.
    def check_structure(self, sheet: Sheet) -> None:
        layout_of(sheet)

    def check_headers(self, sheet: Sheet, known: Knowledge) -> None:
        check_headers(sheet, known)

    def refresh_request(self, con: duckdb.DuckDBPyConnection, sheet: Sheet, known: Knowledge, round_number: int) -> RefreshRequest | None:
        if round_number == 0:  # what the keys and columns need: definitions, tracking requests
            tracking = _needs_tracking_requests(sheet)
            return RefreshRequest(
                definitions=not definitions_fresh(con) or bool(unknown_slugs(sheet, known)),
                tracking_requests=tracking,
                tracking_since=tracking_since(con) if tracking else None,
                request_numbers=unresolved_numbers(sheet, "request_number", known),
            )
        if round_number == 1:
            # Only now are the definitions known that say a long file's keys are request numbers;
            # with none to look up, the request is empty and costs nothing.
            numbers = _long_file_request_numbers(sheet, known)
            return RefreshRequest(
                tracking_requests=bool(numbers), tracking_since=tracking_since(con) if numbers else None, request_numbers=numbers
            )
        if round_number == 2:  # then the current values of what the rows touch, and nothing more
            scope = touched_values(sheet, known)
            return RefreshRequest(values=scope) if scope.entities else None
        return None

    def plan(self, sheet: Sheet, known: Knowledge, *, clear_empty: bool = False) -> tuple[list[Change], list[Problem]]:
        return plan(sheet, known, clear_empty=clear_empty)

    # Writing.
    def phase(self, change: Change) -> int:
        return 0

    async def write(self, client: AsyncShipsyncClient, change: Change) -> None:
        await _write_value(client, change)

    # Reflecting.
    def reflect(self, applied: Sequence[Change], into: Reflection) -> None:
        written = [r for c in applied if c.action != "delete" and (r := c.payload.get("resource"))]
        if written:
            into.rows(declared_tables_batch(CustomField, written, observed_at=into.observed_at))
        into.delete("custom_fields", "id", [c.resource_id for c in applied if c.action == "delete" and c.resource_id])

    # Reversing: against each value as the service has it now.
    def undo_refresh(self, images: Sequence[UndoImage], known: Knowledge, round_number: int) -> RefreshRequest | None:
        if round_number > 0:
            return None
        definitions = {d.id: d.api_slug for image in images if (d := known.definitions.get(image.field)) is not None}
        return RefreshRequest(values=ValueScope(frozenset((i.entity_type, i.entity_id) for i in images), definitions))

    def reverse(self, images: Sequence[UndoImage], known: Knowledge) -> list[Change]:
        return [
            _reversal(row, image, known.values.get((image.entity_type, image.entity_id, image.field)))
            for row, image in enumerate(images, 1)
        ]


def _reversal(row: int, image: UndoImage, present: tuple[str, Any] | None) -> Change:
    """Put back one value: delete what the run created, patch back what it changed, create again
    what it removed; only where the value is still what the run left."""
    now = present[1] if present is not None else None
    if not same_value(now, image.after):
        return as_before(row, image) if same_value(now, image.before) else changed_since(row, image, now)
    if image.before is None:  # the run created it (or meant to): it goes
        return Change(row, image.entity_type, image.entity_id, image.field, "delete", now, None, present[0] if present else None)
    if present is None:  # the run deleted it: it comes back
        return Change(row, image.entity_type, image.entity_id, image.field, "create", None, image.before)
    return Change(row, image.entity_type, image.entity_id, image.field, "update", now, image.before, present[0])


def _entity_rows(sheet: Sheet, known: Knowledge, layout: Layout, problems: list[Problem]) -> Iterator[tuple[int, list[Cell], str, str]]:
    """Each row whose key names a known entity, as (row number, cells, entity type, entity id);
    every other row is a problem instead."""
    index = {h: i for i, h in enumerate(sheet.headers)}
    slug_index = index.get("api_slug", 0)
    for row, number in zip(sheet.rows, sheet.row_numbers, strict=True):
        if number in sheet.ragged:
            problems.append(Problem(number, "(row)", "", sheet.ragged[number]))
            continue
        key_text = cell_text(row[index[layout.entity_column]])
        if not key_text:
            problems.append(Problem(number, layout.entity_column, "", "the key is empty"))
            continue
        hint = cell_text(row[index["entity_type"]]).strip().lower() if "entity_type" in index else ""
        if layout.long and not hint and (definition := known.definitions.get(cell_text(row[slug_index]))) is not None:
            hint = definition.applies_to  # a long file's row names one field: its entity type says what the key is
        try:
            entity_type, entity_id = resolve_entity(layout.entity_column, key_text, known, hint)
        except ValueProblem as exc:
            problems.append(Problem(number, layout.entity_column, key_text, str(exc)))
            continue
        yield number, row, entity_type, entity_id


def _columns_of(sheet: Sheet, layout: Layout) -> Callable[[list[Cell]], list[tuple[str, int, str]]]:
    """A row's (api_slug, cell position, column name) triples: one per slug column of a wide file
    (the same list for every row, found once), or the long row's one."""
    index = {h: i for i, h in enumerate(sheet.headers)}
    if layout.long:
        slug_index, value_index = index["api_slug"], index["value"]
        return lambda row: [(cell_text(row[slug_index]), value_index, "value")]
    wide_columns = [(slug, index[slug], slug) for slug in layout.slug_columns]
    return lambda row: wide_columns


def touched_values(sheet: Sheet, known: Knowledge) -> ValueScope:
    """The entities the file's rows name and the definitions of their fields: the values whose
    current state the plan compares against."""
    layout = layout_of(sheet)
    columns_of = _columns_of(sheet, layout)
    entities: set[tuple[str, str]] = set()
    definitions: dict[str, str] = {}
    for _, row, entity_type, entity_id in _entity_rows(sheet, known, layout, []):
        for slug, _, _ in columns_of(row):
            definition = known.definitions.get(slug)
            if definition is not None and definition.applies_to == entity_type:
                entities.add((entity_type, entity_id))
                definitions[definition.id] = slug
    return ValueScope(frozenset(entities), definitions)


def _converter(definition: Definition) -> Callable[[Cell], tuple[bool, Any]]:
    """A field's cells to (True, value) or (False, why not), each distinct cell converted and
    checked once: spreadsheets repeat values (priorities, yes/no, dates, option lists). The cell's
    type is part of the key (True, 1 and 1.0 are equal keys but not the same cell)."""
    outcomes: dict[object, tuple[bool, Any]] = {}
    rules, labels = definition.rules, definition.labels

    def convert(cell: Cell) -> tuple[bool, Any]:
        key = cell if type(cell) is str else (type(cell), cell)
        outcome = outcomes.get(key)
        if outcome is None:
            try:
                outcome = (True, cell_value(cell, rules, labels))
            except ValueProblem as exc:
                outcome = (False, str(exc))
            outcomes[key] = outcome
        return outcome

    return convert


def plan(sheet: Sheet, known: Knowledge, *, clear_empty: bool = False) -> tuple[list[Change], list[Problem]]:
    layout = layout_of(sheet)
    columns_of = _columns_of(sheet, layout)
    changes: list[Change] = []
    problems: list[Problem] = []
    # Per entity, the row that set each of its fields: a second row setting one is a problem.
    claimed: dict[tuple[str, str], dict[str, int]] = {}
    converters: dict[str, Callable[[Cell], tuple[bool, Any]]] = {}
    definitions, values = known.definitions, known.values
    for number, row, entity_type, entity_id in _entity_rows(sheet, known, layout, problems):
        setters = claimed.setdefault((entity_type, entity_id), {})
        for slug, position, column in columns_of(row):
            cell = row[position]  # cells arrive stripped from the reader
            definition = definitions.get(slug)
            if definition is None:
                problems.append(Problem(number, "api_slug", slug, "names no custom field definition"))
                continue
            if definition.applies_to != entity_type:
                if cell != "":
                    named = entity_type.replace("_", " ")
                    problems.append(Problem(number, column, cell, f"{slug} applies to {definition.entity_type}, not a {named}"))
                continue
            current = values.get((entity_type, entity_id, slug))
            if cell == "":
                if clear_empty and current is not None:
                    changes.append(Change(number, entity_type, entity_id, slug, "delete", current[1], None, current[0]))
                continue
            if slug in setters:
                problems.append(Problem(number, column, cell, f"the same field of this {entity_type} is set in row {setters[slug]}"))
                continue
            convert = converters.get(slug)
            if convert is None:
                convert = converters[slug] = _converter(definition)
            valid, value = convert(cell)
            if not valid:
                problems.append(Problem(number, column, cell, value))
                continue
            setters[slug] = number  # only a valid value claims the field
            if current is not None and current[1] == value:
                changes.append(Change(number, entity_type, entity_id, slug, "skip", value, value, current[0], status="unchanged"))
                continue
            action: Action = "create" if current is None else "update"
            resource_id, before = current if current is not None else (None, None)
            payload = {"definition_id": definition.id}
            source = None if column == slug else column
            changes.append(
                Change(number, entity_type, entity_id, slug, action, before, value, resource_id, payload=payload, read=cell, column=source)
            )
    return changes, problems


def resource_of(value: CustomField, change: Change) -> JsonObject:
    """The value as the warehouse keeps it: the answer's members, and where the answer left one
    out (or null), what was sent. A write that happened is never recorded as something else."""
    entity = value.entity.model_dump() if value.entity else {"type": change.entity_type, "id": change.entity_id}
    definition_id = value.definition.id if value.definition else change.payload.get("definition_id")
    relationships: dict[str, Any] = {"entity": {"data": entity}}
    if definition_id:
        relationships["definition"] = {"data": {"type": "custom_field_definition", "id": definition_id}}
    return {
        "id": value.id,
        "type": "custom_field",
        "links": {"self": value.self_link} if value.self_link else {},
        "attributes": {
            "api_slug": value.api_slug or change.field,
            "value": value.value if value.value is not None else change.after,
            "display_value": value.display_value,
        },
        "relationships": relationships,
    }


async def _recover_duplicate(client: AsyncShipsyncClient, change: Change) -> CustomField:
    existing = [cf for cf in await client.custom_fields.of_entity(change.entity_type, change.entity_id) if cf.api_slug == change.field]
    if not existing:
        raise ValidationError("the service refused the value as a duplicate but none was found", errors=())
    change.action, change.before, change.resource_id = "update", existing[0].value, existing[0].id
    change.detail = "existed already; updated"
    if existing[0].value == change.after:
        return existing[0]
    return await client.custom_fields.update(existing[0].id, change.after)


async def _write_value(client: AsyncShipsyncClient, change: Change) -> None:
    fields = client.custom_fields
    if change.action == "delete":
        assert change.resource_id is not None
        await fields.delete(change.resource_id)
        return
    value: CustomField | None = None
    if change.action == "update" and change.resource_id:
        try:
            value = await fields.update(change.resource_id, change.after)
        except NotFoundError:
            change.action, change.before, change.resource_id = "create", None, None  # deleted meanwhile
    if value is None:
        try:
            value = await fields.create(
                entity_type=change.entity_type, entity_id=change.entity_id, api_slug=change.field, value=change.after
            )
            change.resource_id = value.id
        except ValidationError as exc:
            if not any(e.pointer == "/data/attributes/api_slug" for e in exc.errors):
                raise
            value = await _recover_duplicate(client, change)
    change.payload["resource"] = resource_of(value, change)
