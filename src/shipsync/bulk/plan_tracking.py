"""Plan tracking request edits: key `id` or `request_number`; only changed attributes are sent."""

from __future__ import annotations

import re
from typing import Any

from shipsync.bulk.cells import cell_text, split_list
from shipsync.bulk.lookup import Knowledge
from shipsync.bulk.model import Change, Problem
from shipsync.bulk.reader import Sheet
from shipsync.errors import InputError

LIST_FIELDS = ("ref_numbers", "tags")
EDITABLE = ("ref_numbers", "tags", "request_number", "scac", "customer_id")
ADJUSTERS = ("tags_add", "tags_remove", "ref_numbers_add", "ref_numbers_remove")
SCAC = re.compile(r"^[A-Z]{2,4}$")


def key_column(sheet: Sheet) -> str:
    if "id" in sheet.headers:
        return "id"
    if "request_number" in sheet.headers:
        return "request_number"
    raise InputError(f"{sheet.file}: no key column; add `id` or `request_number`")


def check_headers(sheet: Sheet, known: Knowledge) -> None:
    key = key_column(sheet)
    allowed = {key, *EDITABLE, *ADJUSTERS}
    unknown = [h for h in sheet.headers if h not in allowed]
    if unknown:
        raise InputError(
            f"{sheet.file}: unknown column(s) {', '.join(unknown)}; tracking requests take "
            f"{key}, {', '.join(EDITABLE)}, {', '.join(ADJUSTERS)}"
        )
    if len(sheet.headers) == 1:
        raise InputError(f"{sheet.file}: nothing to change: add a column such as tags or ref_numbers")


def request_numbers_to_resolve(sheet: Sheet, known: Knowledge) -> list[str]:
    if key_column(sheet) != "request_number":
        return []
    column = sheet.headers.index("request_number")
    return sorted(
        {
            cell_text(r[column]).strip()
            for r in sheet.rows
            if cell_text(r[column]).strip() and cell_text(r[column]).strip().upper() not in known.tracking_by_number
        }
    )


def _desired(row: dict[str, str], current: dict[str, Any], key: str) -> tuple[dict[str, Any], list[tuple[str, str, str]]]:
    wanted: dict[str, Any] = {}
    problems: list[tuple[str, str, str]] = []
    for name in LIST_FIELDS:
        base = list(current.get(name) or [])
        if row.get(name):
            base = split_list(row[name])
        for tag in split_list(row.get(f"{name}_add", "")):
            if tag not in base:
                base.append(tag)
        removals = set(split_list(row.get(f"{name}_remove", "")))
        base = [t for t in base if t not in removals]
        if base != list(current.get(name) or []):
            wanted[name] = base
    if key != "request_number" and row.get("request_number") and row["request_number"] != current.get("request_number"):
        wanted["request_number"] = row["request_number"]
    if row.get("scac"):
        scac = row["scac"].upper()
        if not SCAC.match(scac):
            problems.append(("scac", row["scac"], "a SCAC is 2 to 4 letters"))
        elif scac != current.get("scac"):
            wanted["scac"] = scac
    if row.get("customer_id") and row["customer_id"] != current.get("customer_id"):
        wanted["customer_id"] = row["customer_id"]
    return wanted, problems


def plan(sheet: Sheet, known: Knowledge, *, clear_empty: bool = False) -> tuple[list[Change], list[Problem]]:
    key = key_column(sheet)
    changes: list[Change] = []
    problems: list[Problem] = []
    seen: dict[str, int] = {}
    for cells, number in zip(sheet.rows, sheet.row_numbers, strict=True):
        if number in sheet.ragged:
            problems.append(Problem(number, "(row)", "", sheet.ragged[number]))
            continue
        row = dict(zip(sheet.headers, map(cell_text, cells), strict=True))
        key_text = row[key].strip()
        ids = [key_text] if key == "id" and key_text in known.tracking_requests else known.tracking_by_number.get(key_text.upper(), [])
        if not key_text:
            problems.append(Problem(number, key, "", "the key is empty"))
            continue
        if not ids:
            problems.append(Problem(number, key, key_text, "no such tracking request (checked the warehouse and the service)"))
            continue
        if len(ids) > 1:
            problems.append(Problem(number, key, key_text, f"{len(ids)} tracking requests have this number; use the id column"))
            continue
        tr_id = ids[0]
        if tr_id in seen:
            problems.append(Problem(number, key, key_text, f"the same tracking request is edited in row {seen[tr_id]}"))
            continue
        seen[tr_id] = number
        current = known.tracking_requests[tr_id]
        wanted, row_problems = _desired(row, current, key)
        if row_problems:
            problems.extend(Problem(number, column, value, reason) for column, value, reason in row_problems)
            continue
        field = ",".join(sorted(wanted)) or "(none)"
        before = {name: current.get(name) for name in wanted}
        if wanted:
            changes.append(Change(number, "tracking_request", tr_id, field, "update", before, wanted, tr_id))
        else:
            changes.append(Change(number, "tracking_request", tr_id, field, "skip", None, None, tr_id, status="unchanged"))
    return changes, problems
