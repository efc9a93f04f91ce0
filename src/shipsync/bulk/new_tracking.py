"""The new-tracking kind: start tracking the numbers a spreadsheet lists (`POST /tracking_requests`).

A row names what the number is (`request_type`: bill of lading, booking or container), the number
(`request_number`) and its carrier (`scac`; empty asks the service to detect it,
`auto_detect_vocc_scac`), with optional `ref_numbers` and `shipment_tags` (lists in one cell) and
custom field values staged for the shipment and its containers before they exist
(`initial_custom_fields`): a column `shipment.SLUG` or `container.SLUG` per field, each slug checked
against the account's definitions before anything is sent; `container_number` sends a row's
container values to that one container. `customer` names the party the tracking is for, by its
company name or id (the account's parties are read when the column is filled). Container numbers
are checked against ISO 6346 and carriers against the service's shipping lines before anything
is sent.

A number the account already tracks (a request pending, awaiting its manifest or created) is not
sent again, nor one whose request with the same carrier (or detection) failed, so a re-run of the
same file creates nothing new. A row the service refuses shows the
service's message with the member it points at, and what the service reads the number as
(`POST /tracking_requests/infer_number`). A request whose carrier is being detected is answered
`pending`; a pull or a webhook delivery settles it to `created` or `failed` in `tracking_requests`,
which `bulk_results.entity_id` (the new request's id) joins, and a re-run of the file says which.

Starting to track is not undone by `apply undo`: stopping is its own spreadsheet (`stop-tracking`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import duckdb

from shipsync import iso6346
from shipsync.api import AsyncShipsyncClient
from shipsync.api.account_models import TrackingRequest
from shipsync.bulk.cells import Cell, cell_text, cell_value, split_list
from shipsync.bulk.execute import refused
from shipsync.bulk.kind import RefreshRequest, Scope, tracking_since
from shipsync.bulk.lookup import Definition, Knowledge
from shipsync.bulk.model import Change, KindName, Problem, UndoImage, skipped
from shipsync.bulk.reader import Sheet
from shipsync.bulk.reflect import Reflection
from shipsync.bulk.refresh import definitions_fresh, lines_fresh
from shipsync.bulk.suggest import closest, with_suggestions
from shipsync.errors import ApiError, AuthenticationError, InputError, OutcomeUnknownError
from shipsync.values import ValueProblem
from shipsync.warehouse.declared_rows import declared_tables_batch

REQUEST_TYPES = ("bill_of_lading", "booking_number", "container")
# What people write for a request type, as the service names it.
TYPE_ALIASES = {"bl": "bill_of_lading", "bol": "bill_of_lading", "mbl": "bill_of_lading", "booking": "booking_number"}
# A request in one of these is tracking its number (the service refuses a second as a duplicate).
ACTIVE = ("pending", "awaiting_manifest", "created")
PLAIN_COLUMNS = ("request_type", "request_number", "scac", "ref_numbers", "shipment_tags", "customer", "container_number")
FIELD_PARTS = {"shipment": ("shipment", "shipment"), "container": ("containers", "container")}  # prefix -> (part, entity)
CUSTOMER = "customer"  # a planned create's party id, sent as `relationships.customer`


def request_type_of(text: str) -> str | None:
    """`Bill of lading`, `bill-of-lading`, `BL` ... -> `bill_of_lading`; None if it is none of them."""
    name = "_".join(text.strip().lower().replace("-", " ").split())
    name = TYPE_ALIASES.get(name, name)
    return name if name in REQUEST_TYPES else None


def field_columns(sheet: Sheet) -> list[tuple[str, str, str]]:
    """(column, prefix, api_slug) of each `shipment.SLUG` / `container.SLUG` column."""
    found = []
    for header in sheet.headers:
        prefix, dot, slug = header.partition(".")
        if dot and prefix in FIELD_PARTS and slug:
            found.append((header, prefix, slug))
    return found


def _settled(request: dict[str, Any]) -> str:
    status = request.get("status") or "unknown"
    reason = f": {request['failed_reason']}" if request.get("failed_reason") else ""
    return f"{status}{reason}"


class NewTracking:
    name: KindName = "new-tracking"
    scope = Scope(tracking=True, lines=True)
    undoable = False

    # Planning.
    def check_structure(self, sheet: Sheet) -> None:
        missing = [c for c in ("request_type", "request_number") if c not in sheet.headers]
        if missing:
            raise InputError(f"{sheet.file}: missing column(s) {', '.join(missing)}")
        fields = {column for column, _, _ in field_columns(sheet)}
        unknown = [h for h in sheet.headers if h not in PLAIN_COLUMNS and h not in fields]
        if unknown:
            raise InputError(
                f"{sheet.file}: unknown column(s) {with_suggestions(unknown, PLAIN_COLUMNS)}; new tracking takes "
                f"{', '.join(PLAIN_COLUMNS)} and shipment.SLUG / container.SLUG for custom field values"
            )

    def check_headers(self, sheet: Sheet, known: Knowledge) -> None:
        for column, prefix, slug in field_columns(sheet):
            definition = known.definitions.get(slug)
            entity = FIELD_PARTS[prefix][1]
            if definition is None:
                fields = [d.api_slug for d in known.definitions.values() if d.applies_to == entity]
                meant = closest(slug, fields)
                hint = f" (did you mean {prefix}.{meant}?)" if meant else ""
                raise InputError(f"{sheet.file}: column {column}: the account has no custom field definition {slug!r}{hint}")
            if definition.applies_to != entity:
                raise InputError(f"{sheet.file}: column {column}: {slug!r} is a field of the {definition.applies_to}, not the {entity}")

    def refresh_request(self, con: duckdb.DuckDBPyConnection, sheet: Sheet, known: Knowledge, round_number: int) -> RefreshRequest | None:
        if round_number > 0:
            return None
        numbers = sorted({number for number, _ in _numbers(sheet)} - {""})
        scacs = {scac for _, scac in _numbers(sheet)} - {""}
        stale_definitions = bool(field_columns(sheet)) and not definitions_fresh(con)
        # The carriers the rows name are checked against the service's lines: read when never read
        # lately, or when a row names one the warehouse does not know (the service may have added it).
        stale_lines = bool(scacs) and (not lines_fresh(con) or bool(scacs - set(known.shipping_lines)))
        # Every listed number as the service has it now: tracked already, and how it settled.
        customers = "customer" in sheet.headers and any(cell_text(r[sheet.headers.index("customer")]).strip() for r in sheet.rows)
        return RefreshRequest(
            definitions=stale_definitions,
            tracking_requests=True,
            tracking_since=tracking_since(con),
            request_numbers=numbers,
            shipping_lines=stale_lines,
            parties=customers,
        )

    def plan(self, sheet: Sheet, known: Knowledge, *, clear_empty: bool = False) -> tuple[list[Change], list[Problem]]:
        index = {h: i for i, h in enumerate(sheet.headers)}
        fields = [(column, FIELD_PARTS[prefix][0], known.definitions[slug]) for column, prefix, slug in field_columns(sheet)]
        changes: list[Change] = []
        problems: list[Problem] = []
        seen: dict[str, int] = {}
        for cells, number in zip(sheet.rows, sheet.row_numbers, strict=True):
            if number in sheet.ragged:
                problems.append(Problem(number, "(row)", "", sheet.ragged[number]))
                continue
            row = {h: cell_text(cells[i]).strip() for h, i in index.items()}
            request, readings, row_problems = _request(number, row, cells, index, fields, known)
            if row_problems:
                problems.extend(row_problems)
                continue
            request_number = request["request_number"].upper()
            if request_number in seen:
                problems.append(
                    Problem(number, "request_number", row["request_number"], f"the same number is in row {seen[request_number]}")
                )
                continue
            seen[request_number] = number
            tracking = [known.tracking_requests[i] for i in known.tracking_by_number.get(request_number, [])]
            active = [t for t in tracking if (t.get("status") or "pending") in ACTIVE]
            if active:
                first = active[0]
                detail = f"already tracked by tracking request {first['id']} ({_settled(first)})"
                changes.append(skipped(number, "tracking_request", first["id"], "request", first["id"], detail))
                continue
            # The same ask as one that failed fails again: a re-run of the file sends it no more.
            same = [t for t in tracking if (t.get("scac") or "") == request.get("scac", "")]
            if same:
                reason = f"tracking request {same[0]['id']} for this number failed ({_settled(same[0])}); give another scac to try again"
                problems.append(Problem(number, "request_number", row["request_number"], reason))
                continue
            earlier = f"an earlier request with scac {tracking[0].get('scac')} failed ({_settled(tracking[0])})" if tracking else ""
            payload = {"customer_id": request.pop(CUSTOMER)} if CUSTOMER in request else {}
            changes.append(
                Change(
                    number,
                    "tracking_request",
                    request_number,
                    "request",
                    "create",
                    None,
                    request,
                    detail=earlier,
                    payload=payload,
                    readings=readings,
                )
            )
        return changes, problems

    # Writing.
    def phase(self, change: Change) -> int:
        return 0

    async def write(self, client: AsyncShipsyncClient, change: Change) -> None:
        try:
            created = await client.tracking_requests.create(change.after, customer_id=change.payload.get("customer_id"))
        except (AuthenticationError, OutcomeUnknownError):
            raise
        except ApiError as exc:
            raise ApiError(refused(exc) + await _number_hint(client, change.after["request_number"])) from None
        change.entity_id = change.resource_id = created.id
        change.payload["resource"] = created.raw
        status = created.status or "unknown"
        change.detail = f"tracking request {created.id}: {status}"
        if status == "pending":
            scac = change.after.get("scac")
            looking = f"the service is looking the number up at {scac}" if scac else "the carrier is being detected"
            change.detail += f"; {looking}: a pull or webhook says if created or failed"

    # Reflecting: the new request as the service answered it.
    def reflect(self, applied: Sequence[Change], into: Reflection) -> None:
        resources = [c.payload["resource"] for c in applied if c.payload.get("resource")]
        if resources:
            into.rows(declared_tables_batch(TrackingRequest, resources, observed_at=into.observed_at))

    # Reversing.
    def undo_refresh(self, images: Sequence[UndoImage], known: Knowledge, round_number: int) -> RefreshRequest | None:
        return None

    def reverse(self, images: Sequence[UndoImage], known: Knowledge) -> list[Change]:
        raise InputError("starting to track is not undone: stop tracking with `shipsync apply stop-tracking`")


def _numbers(sheet: Sheet) -> list[tuple[str, str]]:
    """(request number as sent, SCAC) of each row: a container number in its one form."""
    index = {h: i for i, h in enumerate(sheet.headers)}
    found = []
    for cells in sheet.rows:
        text = {h: cell_text(cells[i]).strip() for h, i in index.items() if i < len(cells)}
        number = text.get("request_number", "")
        if request_type_of(text.get("request_type", "")) == "container":
            number = iso6346.normalized(number)
        found.append((number, text.get("scac", "").upper()))
    return found


def _carrier_problem(scac: str, request_type: str | None, known: Knowledge) -> str | None:
    """Why the service will refuse this SCAC for this kind of number, as its shipping lines say;
    None when they do not say (the warehouse has no lines: the service decides)."""
    if len(scac) != 4 or not scac.isalpha():
        return "a SCAC is 4 letters (leave it empty to have the service detect the carrier)"
    if not known.shipping_lines:
        return None
    line = known.shipping_lines.get(scac)
    if line is None:
        meant = closest(scac, known.shipping_lines)
        hint = f"did you mean {meant} ({known.shipping_lines[meant].name})? " if meant else ""
        return f"no shipping line the service tracks with has the SCAC {scac} ({hint}leave it empty to have the service detect the carrier)"
    if request_type is not None and line.tracks.get(request_type) is False:
        kind = request_type.replace("_", " ") + "s"
        return f"{line.name} ({line.scac}) does not track {kind} at the service; leave scac empty to have the carrier detected"
    return None


def _request(
    number: int,
    row: dict[str, str],
    cells: Sequence[Any],
    index: dict[str, int],
    fields: Sequence[tuple[str, str, Definition]],
    known: Knowledge,
) -> tuple[dict[str, Any], tuple[tuple[str, Cell, Any], ...], list[Problem]]:
    """The create's attributes for one row, with the cells each came from and what was sent for
    each (readings), or why the row cannot be sent: checked as far as the service's lines and
    ISO 6346 allow before anything is sent."""
    problems: list[Problem] = []
    readings: list[tuple[str, Cell, Any]] = []
    request_type = request_type_of(row["request_type"])
    if request_type is None:
        problems.append(Problem(number, "request_type", row["request_type"], f"use one of {', '.join(REQUEST_TYPES)}"))
    readings.append(("request_type", row["request_type"], request_type))
    request_number = row["request_number"]
    if not request_number:
        problems.append(Problem(number, "request_number", "", "the number is empty"))
    elif request_type == "container":
        request_number = iso6346.normalized(request_number)
        if (why := iso6346.problem(request_number)) is not None:
            problems.append(Problem(number, "request_number", row["request_number"], why))
    readings.append(("request_number", row["request_number"], request_number))
    scac = row.get("scac", "").upper()
    if scac and (why := _carrier_problem(scac, request_type, known)) is not None:
        problems.append(Problem(number, "scac", row["scac"], why))
    attributes: dict[str, Any] = {"request_type": request_type, "request_number": request_number}
    attributes.update({"scac": scac} if scac else {"auto_detect_vocc_scac": True})
    if scac:
        readings.append(("scac", row["scac"], scac))
    for name in ("ref_numbers", "shipment_tags"):
        if row.get(name):
            attributes[name] = split_list(row[name])
            readings.append((name, row[name], attributes[name]))
    if row.get("customer"):
        try:
            attributes[CUSTOMER] = customer_of(row["customer"], known)
            readings.append(("customer", row["customer"], attributes[CUSTOMER]))
        except ValueProblem as exc:
            problems.append(Problem(number, "customer", row["customer"], str(exc)))
    box = _container(number, row, request_type, request_number, problems)
    if box:
        readings.append(("container_number", row["container_number"], box))
    staged: dict[str, list[dict[str, Any]]] = {}
    for column, part, definition in fields:
        cell = cells[index[column]]
        if not cell_text(cell).strip():
            continue
        try:
            value = cell_value(cell, definition.rules, definition.labels)
        except ValueProblem as exc:
            problems.append(Problem(number, column, cell, str(exc)))
            continue
        entry = {"api_slug": definition.api_slug, "value": value} | ({"number": box} if box and part == "containers" else {})
        staged.setdefault(part, []).append(entry)
        readings.append((column, cell, value))
    if box and "containers" not in staged:
        problems.append(
            Problem(
                number,
                "container_number",
                row["container_number"],
                "names the container for the row's container.SLUG values, and the row has none",
            )
        )
    if staged:
        attributes["initial_custom_fields"] = staged
    return attributes, tuple(readings), problems


def _container(number: int, row: dict[str, str], request_type: str | None, request_number: str, problems: list[Problem]) -> str:
    """The one container the row's `container.SLUG` values go to (`initial_custom_fields.containers[].number`),
    normalized; empty: every container of the shipment."""
    text = row.get("container_number", "")
    if not text:
        return ""
    box = iso6346.normalized(text)
    if (why := iso6346.problem(box)) is not None:
        problems.append(Problem(number, "container_number", text, why))
        return ""
    if request_type == "container" and box != request_number:
        problems.append(
            Problem(number, "container_number", text, f"this row tracks the container {request_number} alone: give that number, or none")
        )
        return ""
    return box


def customer_of(text: str, known: Knowledge) -> str:
    """The id of the party (customer) a cell names, by its id or its company name (any case)."""
    parties = known.parties or {}
    if text in parties:
        return text
    wanted = " ".join(text.split()).casefold()
    named = [party_id for party_id, name in parties.items() if " ".join(name.split()).casefold() == wanted]
    if len(named) == 1:
        return named[0]
    if named:
        raise ValueProblem(f"{len(named)} parties are named {text!r} ({', '.join(named[:5])}): give the customer's id instead")
    meant = closest(text, sorted(set(parties.values())))
    hint = f"did you mean {meant}?" if meant else f"the service lists {len(parties)} parties"
    raise ValueProblem(f"no party (customer) is named {text!r} ({hint})")


async def _number_hint(client: AsyncShipsyncClient, number: str) -> str:
    """What the service reads a refused row's number as, to say why it could not place it."""
    try:
        guess = await client.tracking_requests.infer_number(number)
    except (AuthenticationError, OutcomeUnknownError):
        raise
    except ApiError as exc:
        return f" (the service does not read {number!r} as a number it tracks: {refused(exc)})"
    validation = _object(guess.get("validation"))
    line = _object(guess.get("shipping_line"))
    parts = [f"the service reads {number!r} as a {str(guess.get('number_type') or 'number').replace('_', ' ')}"]
    if validation.get("is_valid") is False:
        parts.append(f"not valid ({validation.get('reason') or 'no reason given'})")
    selected = _object(line.get("selected")).get("scac")
    candidates = [str(c["scac"]) for c in line.get("candidates") or [] if isinstance(c, dict) and c.get("scac")]
    if selected:
        parts.append(f"carrier {selected}")
    elif candidates:
        parts.append(f"carrier one of {', '.join(candidates)}")
    return f" ({'; '.join(parts)})"


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
