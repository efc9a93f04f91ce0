"""The tracking-requests kind: edits of tracking requests, keyed by `id` or `request_number`.

A tracking request's tags and reference numbers belong to the shipment it tracks, so `tags`,
`ref_numbers` and their `_add`/`_remove` columns become `PATCH /shipments/{id}`, computed against
the shipment's tags as just read from the service (never overwriting tags someone else set); the
request's own `ref_number` is the one attribute `PATCH /tracking_requests/{id}` takes, sent only
when the request's `ref_numbers` (its answers carry no `ref_number`) lack it.

Undo takes out of a shipment's lists what the run added and puts back what it removed, against the
lists as they are now (what others changed since stays). A request's `ref_number` (which the
service adds to its shipment's reference numbers and cannot clear) is undone by taking the number
out of the shipment's `ref_numbers`, the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import duckdb

from shipsync.api import AsyncShipsyncClient
from shipsync.bulk.cells import cell_text, split_list
from shipsync.bulk.kind import RefreshRequest, Scope, rows_of, tracking_since, unresolved_numbers
from shipsync.bulk.lookup import Knowledge
from shipsync.bulk.model import Change, KindName, Problem, UndoImage, skipped
from shipsync.bulk.present import as_before
from shipsync.bulk.reader import Sheet
from shipsync.bulk.reflect import Reflection, answered
from shipsync.bulk.suggest import with_suggestions
from shipsync.errors import InputError

LIST_FIELDS = ("tags", "ref_numbers")
LIST_COLUMNS = ("tags", "tags_add", "tags_remove", "ref_numbers", "ref_numbers_add", "ref_numbers_remove")
EDITABLE = (*LIST_COLUMNS, "ref_number")
# Columns people may bring from older templates or exports; the API does not let them change.
NOT_EDITABLE = ("request_number", "scac", "customer_id", "customer", "status", "request_type")


def key_column(sheet: Sheet) -> str:
    if "id" in sheet.headers:
        return "id"
    if "request_number" in sheet.headers:
        return "request_number"
    raise InputError(f"{sheet.file}: no key column; add `id` or `request_number`")


def reverse_delta(current: list[str], applied: list[str], restored: list[str]) -> list[str]:
    """Undo of a list edit against the list as it is now: take out what the edit added, put back
    what it removed, and leave alone whatever someone else changed since."""
    added = [v for v in applied if v not in restored]
    removed = [v for v in restored if v not in applied]
    kept = [v for v in current if v not in added]
    return kept + [v for v in removed if v not in kept]


class TrackingRequestEdits:
    name: KindName = "tracking-requests"
    scope = Scope(tracking=True)
    undoable = True

    # Planning.
    def check_structure(self, sheet: Sheet) -> None:
        key = key_column(sheet)
        fixed = [h for h in sheet.headers if h != key and h in NOT_EDITABLE]
        if fixed:
            raise InputError(
                f"{sheet.file}: column(s) {', '.join(fixed)} cannot be changed through the service's API (a tracking request "
                "takes only ref_number; its tags and ref_numbers change on its shipment): remove them"
            )
        unknown = [h for h in sheet.headers if h not in (key, *EDITABLE)]
        if unknown:
            named = with_suggestions(unknown, (key, *EDITABLE))
            raise InputError(f"{sheet.file}: unknown column(s) {named}; tracking requests take {key}, {', '.join(EDITABLE)}")
        if len(sheet.headers) == 1:
            raise InputError(f"{sheet.file}: nothing to change: add a column such as tags_add or ref_number")

    def check_headers(self, sheet: Sheet, known: Knowledge) -> None:
        self.check_structure(sheet)

    def refresh_request(self, con: duckdb.DuckDBPyConnection, sheet: Sheet, known: Knowledge, round_number: int) -> RefreshRequest | None:
        if round_number == 0:
            numbers = unresolved_numbers(sheet, "request_number", known) if key_column(sheet) == "request_number" else []
            return RefreshRequest(tracking_requests=True, tracking_since=tracking_since(con), request_numbers=numbers)
        if round_number == 1 and any(c in sheet.headers for c in LIST_COLUMNS):
            # The shipments' tags as they are now: tags_add and tags_remove are computed against them.
            shipments = {known.tracking_requests[t]["tracked_object_id"] for t in self._targets(sheet, known)}
            return RefreshRequest(shipment_ids=sorted(s for s in shipments if s))
        return None

    def _targets(self, sheet: Sheet, known: Knowledge) -> list[str]:
        key = key_column(sheet)
        index = sheet.headers.index(key)
        found: list[str] = []
        for row in sheet.rows:
            ids = self._resolve(key, cell_text(row[index]).strip(), known) if index < len(row) else []
            found.extend(ids[:1] if len(ids) == 1 else [])
        return found

    @staticmethod
    def _resolve(key: str, text: str, known: Knowledge) -> list[str]:
        if key == "id":
            return [text] if text in known.tracking_requests else []
        return known.tracking_by_number.get(text.upper(), [])

    def plan(self, sheet: Sheet, known: Knowledge, *, clear_empty: bool = False) -> tuple[list[Change], list[Problem]]:
        key = key_column(sheet)
        changes: list[Change] = []
        problems: list[Problem] = []
        seen: dict[str, int] = {}
        shipments_seen: dict[str, int] = {}
        for number, row in rows_of(sheet, problems):
            key_text = row[key].strip()
            if not key_text:
                problems.append(Problem(number, key, "", "the key is empty"))
                continue
            ids = self._resolve(key, key_text, known)
            if not ids:
                problems.append(Problem(number, key, key_text, "no such tracking request (checked the warehouse and the service)"))
                continue
            if len(ids) > 1:
                shown = ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
                problems.append(
                    Problem(number, key, key_text, f"{len(ids)} tracking requests have this number ({shown}); use the id column")
                )
                continue
            tr_id = ids[0]
            if tr_id in seen:
                problems.append(Problem(number, key, key_text, f"the same tracking request is edited in row {seen[tr_id]}"))
                continue
            seen[tr_id] = number
            row_changes, row_problems = _row_changes(number, row, known.tracking_requests[tr_id], known, shipments_seen)
            problems.extend(row_problems)
            if not row_problems:
                changes.extend(row_changes or [skipped(number, "tracking_request", tr_id, "(none)", tr_id)])
        return changes, problems

    # Writing: a request's `ref_number` joins its shipment's reference numbers, so it is written
    # after the shipment's own lists, or a list written after it would take it out again.
    def phase(self, change: Change) -> int:
        return 1 if change.entity_type == "tracking_request" else 0

    async def write(self, client: AsyncShipsyncClient, change: Change) -> None:
        if change.entity_type == "shipment":
            await _write_shipment_list(client, change)
            return
        updated = await client.tracking_requests.update(change.entity_id, ref_number=change.after)
        # The answer shows the number in `ref_numbers`; where it is silent, what was there and the number.
        shown = updated.ref_numbers if updated.ref_numbers is not None else [*(change.before or []), change.after]
        change.payload["resource"] = answered(updated.raw, {"ref_numbers": shown})

    # Reflecting: the shipment's list, shown by the requests that track it too; a request's
    # reference numbers as its answer showed them, on the request and its shipment.
    def reflect(self, applied: Sequence[Change], into: Reflection) -> None:
        for change in applied:
            if change.entity_type == "shipment":
                values = {"tags" if change.field == "tags" else "ref_numbers": list(change.after or [])}
                into.update("shipments", "id", change.entity_id, values)
                into.update("tracking_requests", "tracked_object_id", change.entity_id, values)
                continue
            shown = ((change.payload.get("resource") or {}).get("attributes") or {}).get("ref_numbers")
            if not isinstance(shown, list):
                continue
            into.update("tracking_requests", "id", change.entity_id, {"ref_numbers": list(shown)})
            of_request = "(SELECT r.tracked_object_id FROM tracking_requests AS r WHERE r.id = s.key)"
            into.update("shipments", "id", change.entity_id, {"ref_numbers": list(shown)}, key_of=of_request)

    # Reversing: against the shipments' lists as the service has them now.
    def undo_refresh(self, images: Sequence[UndoImage], known: Knowledge, round_number: int) -> RefreshRequest | None:
        if round_number > 0:
            return None
        shipments = {_shipment_of(image, known) for image in images} - {None}
        return RefreshRequest(shipment_ids=sorted(s for s in shipments if s))

    def reverse(self, images: Sequence[UndoImage], known: Knowledge) -> list[Change]:
        changes: list[Change] = []
        lists: dict[tuple[str, str], list[str]] = {}  # each list as the undo's earlier changes leave it
        for row, image in enumerate(images, start=1):
            shipment_id = _shipment_of(image, known)
            shipment = known.shipments.get(shipment_id or "")
            if shipment_id is None or shipment is None:
                detail = "its shipment could not be read from the service; left as it is"
                changes.append(Change(row, image.entity_type, image.entity_id, image.field, "skip", status="failed", detail=detail))
                continue
            field = "ref_numbers" if image.entity_type == "tracking_request" else image.field
            current = lists.setdefault((shipment_id, field), list(shipment.get(field) or []))
            if image.entity_type == "tracking_request":  # the request's ref_number: out of its shipment's numbers
                applied, before = [*current, image.after], [n for n in current if n != image.after]
            else:
                applied, before = list(image.after or []), list(image.before or [])
            wanted = reverse_delta(current, applied, before)
            if wanted == current:
                changes.append(as_before(row, image))
                continue
            lists[(shipment_id, field)] = wanted
            changes.append(
                Change(row, "shipment", shipment_id, field, "update", current, wanted, shipment_id, detail=list_change(current, wanted))
            )
        return changes


def _shipment_of(image: UndoImage, known: Knowledge) -> str | None:
    """The shipment whose lists an image changed: its own, or the request's shipment (a `ref_number`)."""
    if image.entity_type == "shipment":
        return image.entity_id
    return (known.tracking_requests.get(image.entity_id) or {}).get("tracked_object_id")


def list_change(before: list[str], after: list[str]) -> str:
    """What turns one list into the other, in words: `added vip; took out seeded`."""
    added = [v for v in after if v not in before]
    removed = [v for v in before if v not in after]
    parts = ([f"added {', '.join(added)}"] if added else []) + ([f"took out {', '.join(removed)}"] if removed else [])
    if not parts and after != before:
        parts.append("reordered")
    return "; ".join(parts)


async def _write_shipment_list(client: AsyncShipsyncClient, change: Change) -> None:
    wanted: list[str] = list(change.after or [])
    shipment = await client.shipments.update(change.entity_id, **{change.field: wanted})
    change.payload["resource"] = answered(shipment.raw, {change.field: wanted})
    change.says = list_change(list(change.before or []), wanted)


def _wanted_list(row: dict[str, str], name: str, current: list[str]) -> list[str]:
    values = split_list(row[name]) if row.get(name) else list(current)
    for value in split_list(row.get(f"{name}_add", "")):
        if value not in values:
            values.append(value)
    removals = set(split_list(row.get(f"{name}_remove", "")))
    return list(dict.fromkeys(v for v in values if v not in removals))


def _row_changes(
    number: int, row: dict[str, str], request: dict[str, Any], known: Knowledge, shipments_seen: dict[str, int]
) -> tuple[list[Change], list[Problem]]:
    changes: list[Change] = []
    problems: list[Problem] = []
    tr_id = request["id"]
    asked = [c for c in LIST_COLUMNS if row.get(c)]
    if asked:
        shipment_id = request.get("tracked_object_id")
        shipment = known.shipments.get(shipment_id or "")
        if not shipment_id:
            problems.append(Problem(number, asked[0], row[asked[0]], "this tracking request tracks no shipment yet: nothing to tag"))
        elif shipment is None:
            problems.append(Problem(number, asked[0], row[asked[0]], f"its shipment {shipment_id} could not be read from the service"))
        elif shipment_id in shipments_seen:
            problems.append(Problem(number, asked[0], row[asked[0]], f"the same shipment is edited in row {shipments_seen[shipment_id]}"))
        else:
            shipments_seen[shipment_id] = number
            for name in LIST_FIELDS:
                if not any(row.get(c) for c in (name, f"{name}_add", f"{name}_remove")):
                    continue
                current = list(shipment.get(name) or [])  # null is empty: the reference declares both lists nullable
                wanted = _wanted_list(row, name, current)
                if wanted != current:
                    payload = {"tracking_request_id": tr_id}
                    read = tuple((c, row[c], wanted) for c in (name, f"{name}_add", f"{name}_remove") if row.get(c))
                    changes.append(
                        Change(
                            number, "shipment", shipment_id, name, "update", current, wanted, shipment_id, payload=payload, readings=read
                        )
                    )
    wanted_ref = row.get("ref_number", "").strip()
    shown = list(request.get("ref_numbers") or [])
    if wanted_ref and wanted_ref not in shown:
        changes.append(Change(number, "tracking_request", tr_id, "ref_number", "update", shown, wanted_ref, tr_id, read=row["ref_number"]))
    return changes, problems
