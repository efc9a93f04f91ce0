"""The custom-field-definitions kind: one definition per row, keyed by `api_slug`.

A new definition is created (with its options); an existing one is edited where the row differs
(`display_name`, `description`, `validation`, `default_format`, `default_value`) and its options
added, relabelled, moved or removed to match the `options` cell. Entity type and data type cannot
change. `Cargo` is read as `Container`; the service creates definitions only for `Shipment` and
`Container`, so a new `TrackingRequest` one is refused here, while an existing one can be edited.

Only the rules the service states are checked here: the four required members, the entity types it
takes, `reference_type` for a `reference` definition, and what its PATCH may not change. Anything
else (a slug's spelling, a data type it may have added, an enum without options, a rule's value) is
sent, and a refusal is the service's 422, shown on the row with the member it points at.

Definitions are written before options (a new option may belong to a definition the same run
creates). Undo deletes what was created, patches back what was edited and creates again the options
that were removed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import duckdb

from shipsync.api import AsyncShipsyncClient
from shipsync.api.account_models import CustomFieldDefinition
from shipsync.api.entity_types import CREATABLE_DEFINITION_ENTITIES, definition_entity
from shipsync.bulk.cells import Cell, cell_value
from shipsync.bulk.kind import RefreshRequest, Scope, rows_of
from shipsync.bulk.lookup import Definition, Knowledge
from shipsync.bulk.model import Change, KindName, Problem, UndoImage, skipped
from shipsync.bulk.plan_options import WantedOption, new_options, option_changes, parse_options
from shipsync.bulk.present import as_before, changed_since
from shipsync.bulk.reader import Sheet
from shipsync.bulk.reflect import Reflection, answered
from shipsync.bulk.suggest import with_suggestions
from shipsync.errors import InputError
from shipsync.json_text import dumps_or_null
from shipsync.values import FieldRules, ValueProblem, whole_number
from shipsync.warehouse.declared_rows import declared_tables_batch
from shipsync.warehouse.normalize import option_columns

REQUIRED = ("entity_type", "api_slug", "display_name", "data_type")
OPTIONAL = (
    "description",
    "validation",
    "required",
    "pattern",
    "max_length",
    "default_format",
    "default_value",
    "reference_type",
    "options",
)
EDITABLE = ("display_name", "description", "validation", "default_format", "default_value")
# Definition attributes kept as JSON in the warehouse.
JSON_ATTRIBUTES = ("validation", "default_value")
DEFINITION, OPTION = "custom_field_definition", "custom_field_option"  # the entity types of this kind's changes
Found = list[tuple[str, str, str]]  # (column, value, reason)


def _validation(row: dict[str, str], base: dict[str, Any], problems: Found) -> dict[str, Any]:
    """The wanted rules: the `validation` cell (or the current rules, unknown ones kept) with the
    `required`, `pattern` and `max_length` cells on top."""
    validation = dict(base)
    if row.get("validation"):
        try:
            parsed = json.loads(row["validation"])
            if not isinstance(parsed, dict):
                raise ValueError
            validation = parsed
        except ValueError:
            problems.append(("validation", row["validation"], 'must be a JSON object such as {"required": true}'))
    if row.get("required"):
        validation["required"] = row["required"].strip().lower() in ("true", "yes", "1", "y", "x")
    if row.get("pattern"):
        validation["pattern"] = row["pattern"]  # the service's own pattern syntax: it says whether it takes it
    if row.get("max_length"):
        cell = row["max_length"].strip()
        length = whole_number(cell)
        validation["max_length"] = length if length is not None else cell
    return validation


def _wanted(row: dict[str, str], existing: Definition | None, problems: Found) -> dict[str, Any]:
    entity = definition_entity(row["entity_type"])
    if entity is None:
        problems.append(("entity_type", row["entity_type"], "must be Shipment, Container (or Cargo) or TrackingRequest"))
    slug = row["api_slug"].strip()
    for column in ("api_slug", "display_name", "data_type"):
        if not row[column].strip():
            problems.append((column, "", "is required"))
    data_type = row["data_type"].strip().lower()
    base = existing.attributes.get("validation") if existing else None
    wanted: dict[str, Any] = {"entity_type": entity, "api_slug": slug, "display_name": row["display_name"].strip(), "data_type": data_type}
    validation = _validation(row, base if isinstance(base, dict) else {}, problems)
    if validation or (existing and base):
        wanted["validation"] = validation
    for name in ("description", "default_format", "default_value", "reference_type"):
        if row.get(name):
            wanted[name] = row[name]
    if data_type == "reference" and not wanted.get("reference_type") and not existing:
        problems.append(("reference_type", "", "is required when data_type is reference"))
    return wanted


def _typed_default(wanted: dict[str, Any], options: list[WantedOption] | None, existing: Definition | None, problems: Found) -> None:
    """The `default_value` cell as a value of the definition's data type: the service takes a
    value typed as its data type says (a boolean `false`, a number), not the cell's text."""
    cell = wanted.get("default_value")
    if not isinstance(cell, str):
        return
    values = [o.value for o in options] if options is not None else [o.value for o in existing.options] if existing else []
    default_format = wanted.get("default_format") or (existing.attributes.get("default_format") if existing else None)
    rules = FieldRules.of({"data_type": wanted["data_type"], "default_format": default_format}, values)
    try:
        wanted["default_value"] = cell_value(cell, rules)
    except ValueProblem as problem:
        problems.append(("default_value", cell, str(problem)))


def _options(row: dict[str, str], data_type: str, existing: Definition | None, problems: Found) -> list[WantedOption] | None:
    """The wanted options; None when the row leaves them as they are."""
    wanted, unreadable = parse_options(row.get("options", ""))
    problems.extend(("options", row.get("options", ""), reason) for reason in unreadable)
    if wanted and data_type not in ("enum", "enum_multi"):
        problems.append(("options", row["options"], "only enum and enum_multi definitions have options"))
    return wanted or None


def _conflicts(wanted: dict[str, Any], existing: Definition) -> Found:
    found: Found = []
    if definition_entity(existing.entity_type) != wanted["entity_type"]:
        found.append(
            ("entity_type", str(wanted["entity_type"]), f"{existing.api_slug} exists on {existing.entity_type}; that cannot change")
        )
    if existing.data_type != wanted["data_type"]:
        found.append(("data_type", wanted["data_type"], f"{existing.api_slug} exists as {existing.data_type}; that cannot change"))
    have = existing.attributes.get("reference_type")
    if "reference_type" in wanted and have and wanted["reference_type"] != have:
        found.append(("reference_type", wanted["reference_type"], f"{existing.api_slug} refers to {have}; that cannot change"))
    return found


# The columns a definition's `validation` is read from.
VALIDATION_COLUMNS = ("validation", "required", "pattern", "max_length")


def _readings(row: dict[str, str], wanted: dict[str, Any], attributes: Sequence[str]) -> tuple[tuple[str, Cell, Any], ...]:
    """(column, cell, value sent) for each filled column that makes one of `attributes`."""
    found: list[tuple[str, Cell, Any]] = []
    for name in attributes:
        columns = VALIDATION_COLUMNS if name == "validation" else (name,)
        found.extend((column, row[column], wanted[name]) for column in columns if row.get(column))
    return tuple(found)


def _same(a: Any, b: Any) -> bool:
    return a == b or (a is not None and b is not None and str(a) == str(b))


class DefinitionEdits:
    name: KindName = "custom-field-definitions"
    scope = Scope()
    undoable = True

    # Planning.
    def check_structure(self, sheet: Sheet) -> None:
        missing = [c for c in REQUIRED if c not in sheet.headers]
        unknown = [h for h in sheet.headers if h not in (*REQUIRED, *OPTIONAL)]
        if missing:
            raise InputError(f"{sheet.file}: missing column(s) {', '.join(missing)}")
        if unknown:
            named = with_suggestions(unknown, (*REQUIRED, *OPTIONAL))
            raise InputError(f"{sheet.file}: unknown column(s) {named}; allowed: {', '.join((*REQUIRED, *OPTIONAL))}")

    def check_headers(self, sheet: Sheet, known: Knowledge) -> None:
        self.check_structure(sheet)

    def refresh_request(self, con: duckdb.DuckDBPyConnection, sheet: Sheet, known: Knowledge, round_number: int) -> RefreshRequest | None:
        return RefreshRequest(definitions=True) if round_number == 0 else None  # always against what the service has now

    def plan(self, sheet: Sheet, known: Knowledge, *, clear_empty: bool = False) -> tuple[list[Change], list[Problem]]:
        changes: list[Change] = []
        problems: list[Problem] = []
        seen: dict[str, int] = {}
        for number, row in rows_of(sheet, problems):
            existing = known.definitions.get(row["api_slug"].strip())
            found: Found = []
            wanted = _wanted(row, existing, found)
            options = _options(row, wanted["data_type"], existing, found)
            _typed_default(wanted, options, existing, found)
            slug = wanted["api_slug"]
            if not found and slug in seen:
                found.append(("api_slug", slug, f"defined again (first in row {seen[slug]})"))
            if not found and existing is not None:
                found.extend(_conflicts(wanted, existing))
            if not found and existing is None and wanted["entity_type"] not in CREATABLE_DEFINITION_ENTITIES:
                found.append(("entity_type", row["entity_type"], "the service creates definitions only on Shipment or Container"))
            if found:
                problems.extend(Problem(number, c, v, r) for c, v, r in found)
                continue
            seen[slug] = number
            changes.extend(self._changes(number, row, wanted, options, existing))
        return changes, problems

    @staticmethod
    def _changes(
        number: int, row: dict[str, str], wanted: dict[str, Any], options: list[WantedOption] | None, existing: Definition | None
    ) -> list[Change]:
        if existing is None:
            payload = {"options": new_options(options or [])}
            read = _readings(row, wanted, list(wanted))
            if row.get("options"):
                read += (("options", row["options"], payload["options"]),)
            return [Change(number, DEFINITION, wanted["api_slug"], "definition", "create", None, wanted, payload=payload, readings=read)]
        differs = [n for n in EDITABLE if n in wanted and not _same(wanted[n], existing.attributes.get(n))]
        changes: list[Change] = []
        if differs:
            before = {n: existing.attributes.get(n) for n in differs}
            after = {n: wanted[n] for n in differs}
            read = _readings(row, wanted, differs)
            changes.append(Change(number, DEFINITION, existing.id, ",".join(differs), "update", before, after, existing.id, readings=read))
        if options is not None:
            for change in option_changes(number, existing, options):
                change.readings = (("options", row["options"], change.after),) if change.action != "delete" else ()
                changes.append(change)
        return changes or [skipped(number, DEFINITION, existing.id, "definition", existing.id)]

    # Writing.
    def phase(self, change: Change) -> int:
        return 0 if change.entity_type == DEFINITION else 1

    async def write(self, client: AsyncShipsyncClient, change: Change) -> None:
        if change.entity_type == DEFINITION:
            await _write_definition(client, change)
        else:
            await _write_option(client, change)

    # Reflecting.
    def reflect(self, applied: Sequence[Change], into: Reflection) -> None:
        for change in applied:
            resource = change.payload.get("resource")
            if change.action == "delete" and change.resource_id:
                if change.entity_type == DEFINITION:
                    into.delete("custom_field_definitions", "id", [change.resource_id])
                    into.delete("custom_field_options", "definition_id", [change.resource_id])
                else:
                    into.delete("custom_field_options", "id", [change.resource_id])
            elif change.entity_type == DEFINITION and change.action == "create" and resource:
                into.rows(declared_tables_batch(CustomFieldDefinition, [resource], observed_at=into.observed_at))
                into.rows(option_columns(str(resource["id"]), change.payload.get("options_created", []), observed_at=into.observed_at))
            elif change.entity_type == DEFINITION and change.action == "update":
                stored = {name: dumps_or_null(value) if name in JSON_ATTRIBUTES else value for name, value in (change.after or {}).items()}
                into.update("custom_field_definitions", "id", change.resource_id, stored)
            elif change.entity_type == OPTION and change.action == "create" and resource:
                into.rows(option_columns(change.entity_id, [resource], observed_at=into.observed_at))
            elif change.entity_type == OPTION and change.action == "update":
                after = change.after or {}
                into.update("custom_field_options", "id", change.resource_id, {"label": after["label"], "position": after["position"]})

    # Reversing, against the definitions as the service has them now: created ones deleted, edited
    # ones patched back, removed options created again.
    def undo_refresh(self, images: Sequence[UndoImage], known: Knowledge, round_number: int) -> RefreshRequest | None:
        return RefreshRequest(definitions=True) if round_number == 0 else None

    def reverse(self, images: Sequence[UndoImage], known: Knowledge) -> list[Change]:
        by_id = {d.id: d for d in known.definitions.values()}
        return [
            _definition_reversal(row, image, known, by_id) if image.entity_type == DEFINITION else _option_reversal(row, image, by_id)
            for row, image in enumerate(images, start=1)
        ]


def _attributes(definition: Definition | None, names: Sequence[str]) -> dict[str, Any] | None:
    """The present values of `names` of a definition (None when it is gone)."""
    return {n: definition.attributes.get(n) for n in names} if definition is not None else None


def _same_attributes(present: dict[str, Any] | None, image: dict[str, Any]) -> bool:
    return present is not None and all(_same(present[n], value) for n, value in image.items())


def _definition_reversal(row: int, image: UndoImage, known: Knowledge, by_id: dict[str, Definition]) -> Change:
    if image.action == "create":  # created by the run: deleted, unless edited since
        after = image.after or {}
        definition = by_id.get(image.resource_id or "") or known.definitions.get(str(after.get("api_slug")))
        if definition is None:
            return as_before(row, image, "already gone")
        edited = [n for n in EDITABLE if n in after]
        present = _attributes(definition, edited)
        if not _same_attributes(present, {n: after[n] for n in edited}):
            return changed_since(row, image, present)
        return Change(row, DEFINITION, definition.id, image.field, "delete", present, None, definition.id)
    definition = by_id.get(image.resource_id or "")
    before, after = image.before or {}, image.after or {}
    present = _attributes(definition, list(after))
    if definition is None or not _same_attributes(present, after):
        return as_before(row, image) if _same_attributes(present, before) else changed_since(row, image, present)
    return Change(row, DEFINITION, definition.id, image.field, "update", present, before, definition.id)


def _option_reversal(row: int, image: UndoImage, by_id: dict[str, Definition]) -> Change:
    definition = by_id.get(image.entity_id)
    option = next((o for o in definition.options if o.value == image.field), None) if definition else None
    present = {"label": option.label, "value": option.value, "position": option.position} if option else None
    if image.action == "create":  # added by the run: removed, unless relabelled since
        if option is None:
            return as_before(row, image, "already gone")
        if not _same(option.label, (image.after or {}).get("label")):
            return changed_since(row, image, present)
        return Change(row, OPTION, image.entity_id, image.field, "delete", present, None, option.id)
    if image.action == "delete":  # removed by the run: created again, unless someone did
        if option is not None:
            return as_before(row, image) if _same(option.label, (image.before or {}).get("label")) else changed_since(row, image, present)
        payload = {"definition_id": image.entity_id}
        return Change(row, OPTION, image.entity_id, image.field, "create", None, image.before, payload=payload)
    before, after = image.before or {}, image.after or {}
    shown = {n: present[n] for n in after} if present else None
    if option is None or not _same_attributes(shown, after):
        return as_before(row, image) if _same_attributes(shown, before) else changed_since(row, image, shown)
    return Change(row, OPTION, image.entity_id, image.field, "update", shown, before, option.id)


async def _write_definition(client: AsyncShipsyncClient, change: Change) -> None:
    definitions = client.custom_field_definitions
    if change.action == "delete":
        assert change.resource_id is not None
        await definitions.delete(change.resource_id)
        return
    if change.action == "update":
        assert change.resource_id is not None
        updated = await definitions.update(change.resource_id, change.after)
        change.payload["resource"] = answered(updated.raw, change.after)
        return
    attrs = change.after
    created = await definitions.create(
        entity_type=attrs["entity_type"],
        api_slug=attrs["api_slug"],
        display_name=attrs["display_name"],
        data_type=attrs["data_type"],
        description=attrs.get("description"),
        validation=attrs.get("validation"),
        default_format=attrs.get("default_format"),
        default_value=attrs.get("default_value"),
        reference_type=attrs.get("reference_type"),
    )
    change.resource_id = created.id
    change.payload["resource"] = answered(created.raw, attrs)
    options = []
    for option in change.payload.get("options", []):
        made = await definitions.create_option(created.id, label=option["label"], value=option["value"], position=option["position"])
        options.append(answered(made.raw, option))
    change.payload["options_created"] = options


async def _write_option(client: AsyncShipsyncClient, change: Change) -> None:
    definitions = client.custom_field_definitions
    definition_id = change.entity_id
    if change.action == "delete":
        assert change.resource_id is not None
        await definitions.delete_option(definition_id, change.resource_id)
        return
    if change.action == "update":
        assert change.resource_id is not None
        updated = await definitions.update_option(
            definition_id, change.resource_id, label=change.after["label"], position=change.after["position"]
        )
        change.payload["resource"] = answered(updated.raw, {"value": change.field, **change.after})
        return
    made = await definitions.create_option(
        definition_id, label=change.after["label"], value=change.after["value"], position=change.after.get("position")
    )
    change.resource_id = made.id
    change.payload["resource"] = answered(made.raw, change.after)
