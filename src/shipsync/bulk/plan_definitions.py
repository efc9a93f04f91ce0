"""Plan custom field definitions (and the options of enum ones) from a file, one per row."""

from __future__ import annotations

import json
import re
from typing import Any

from shipsync.bulk.cells import cell_text, split_list
from shipsync.bulk.lookup import Knowledge
from shipsync.bulk.model import Change, Problem
from shipsync.bulk.reader import Sheet
from shipsync.errors import InputError
from shipsync.values import DATA_TYPES

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
SLUG = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
ENTITY_TYPES = {"shipment": "Shipment", "cargo": "Cargo", "container": "Cargo"}


def check_headers(sheet: Sheet, known: Knowledge) -> None:
    missing = [c for c in REQUIRED if c not in sheet.headers]
    unknown = [h for h in sheet.headers if h not in (*REQUIRED, *OPTIONAL)]
    if missing:
        raise InputError(f"{sheet.file}: missing column(s) {', '.join(missing)}")
    if unknown:
        raise InputError(f"{sheet.file}: unknown column(s) {', '.join(unknown)}; allowed: {', '.join((*REQUIRED, *OPTIONAL))}")


def _attributes(row: dict[str, str]) -> tuple[dict[str, Any], list[str], list[tuple[str, str, str]]]:
    problems: list[tuple[str, str, str]] = []
    entity = ENTITY_TYPES.get(row["entity_type"].strip().lower())
    if entity is None:
        problems.append(("entity_type", row["entity_type"], "must be Shipment or Cargo"))
    slug = row["api_slug"].strip()
    if not SLUG.match(slug):
        problems.append(("api_slug", slug, "lowercase letters, digits and _, starting with a letter"))
    data_type = row["data_type"].strip().lower()
    if data_type not in DATA_TYPES:
        problems.append(("data_type", row["data_type"], f"must be one of {', '.join(DATA_TYPES)}"))
    if not row["display_name"].strip():
        problems.append(("display_name", "", "is required"))
    validation: dict[str, Any] = {}
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
        try:
            re.compile(row["pattern"])
            validation["pattern"] = row["pattern"]
        except re.error as exc:
            problems.append(("pattern", row["pattern"], f"not a regular expression: {exc}"))
    if row.get("max_length"):
        if row["max_length"].strip().isdigit() and int(row["max_length"]) > 0:
            validation["max_length"] = int(row["max_length"])
        else:
            problems.append(("max_length", row["max_length"], "must be a positive whole number"))
    if data_type == "reference" and not row.get("reference_type"):
        problems.append(("reference_type", "", "is required when data_type is reference"))
    options = split_list(row.get("options", ""))
    if options and data_type not in ("enum", "enum_multi"):
        problems.append(("options", row["options"], "only enum and enum_multi definitions have options"))
    if data_type in ("enum", "enum_multi") and not options:
        problems.append(("options", "", "an enum definition needs options (separated by ;)"))
    attributes: dict[str, Any] = {
        "entity_type": entity,
        "api_slug": slug,
        "display_name": row["display_name"].strip(),
        "data_type": data_type,
    }
    for name in ("description", "default_format", "default_value", "reference_type"):
        if row.get(name):
            attributes[name] = row[name]
    if validation:
        attributes["validation"] = validation
    return attributes, options, problems


def plan(sheet: Sheet, known: Knowledge, *, clear_empty: bool = False) -> tuple[list[Change], list[Problem]]:
    changes: list[Change] = []
    problems: list[Problem] = []
    seen: dict[str, int] = {}
    for cells, number in zip(sheet.rows, sheet.row_numbers, strict=True):
        row = dict(zip(sheet.headers, map(cell_text, cells), strict=True))
        attributes, options, row_problems = _attributes(row)
        if row_problems:
            problems.extend(Problem(number, c, v, r) for c, v, r in row_problems)
            continue
        slug = attributes["api_slug"]
        if slug in seen:
            problems.append(Problem(number, "api_slug", slug, f"defined again (first in row {seen[slug]})"))
            continue
        seen[slug] = number
        existing = known.definitions.get(slug)
        if existing is None:
            changes.append(
                Change(
                    number,
                    "custom_field_definition",
                    slug,
                    "definition",
                    "create",
                    None,
                    attributes,
                    payload={"options": options},
                )
            )
            continue
        differs = [k for k in ("entity_type", "data_type") if (existing.attributes.get(k) or existing.entity_type) != attributes[k]]
        if differs:
            problems.append(
                Problem(
                    number,
                    differs[0],
                    str(attributes[differs[0]]),
                    f"{slug} exists as {existing.entity_type}/{existing.data_type}; the API cannot change definitions",
                )
            )
            continue
        have = {v for v, _ in existing.options}
        missing = [o for o in options if o not in have]
        if missing:
            changes.append(
                Change(
                    number,
                    "custom_field_definition",
                    existing.id,
                    "options",
                    "create",
                    sorted(have),
                    missing,
                    existing.id,
                    payload={"options": missing},
                )
            )
        else:
            changes.append(
                Change(
                    number,
                    "custom_field_definition",
                    existing.id,
                    "definition",
                    "skip",
                    None,
                    None,
                    existing.id,
                    status="unchanged",
                )
            )
    return changes, problems
