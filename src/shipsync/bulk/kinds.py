"""Every kind of spreadsheet `shipsync apply` takes, declared once (`SpreadsheetKind`): its name
(`shipsync apply NAME`, and `apply_<name>` in the ledger and the report), its help, its template
(`shipsync template NAME`), what the report calls its runs, and the `BulkKind` that plans and
writes it. The command line, the templates, the ledger's names and the report follow from this
table.

Adding a kind: its `BulkKind` in a module of its own (`bulk/kind.py` says what one holds) and one
entry here. This module stays light: a kind's module is imported when the kind is used, so the
command line starts without them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from shipsync.errors import InputError

if TYPE_CHECKING:
    from shipsync.bulk.kind import BulkKind


@dataclass(frozen=True)
class SpreadsheetKind:
    """One kind of spreadsheet (see the module's docstring). `template`: the header row and two
    example rows naming records the sandbox serves; `clears_empty`: whether `--clear-empty` (an
    empty cell removes the value) applies to it."""

    name: str
    help: str
    run_name: str
    template: tuple[tuple[str, ...], ...]
    load: Callable[[], BulkKind]
    clears_empty: bool = False


def _tracking_requests() -> BulkKind:
    from shipsync.bulk.tracking_edits import TrackingRequestEdits

    return TrackingRequestEdits()


def _custom_field_definitions() -> BulkKind:
    from shipsync.bulk.definitions import DefinitionEdits

    return DefinitionEdits()


def _custom_fields() -> BulkKind:
    from shipsync.bulk.custom_fields import CustomFieldValues

    return CustomFieldValues()


def _new_tracking() -> BulkKind:
    from shipsync.bulk.new_tracking import NewTracking

    return NewTracking()


def _stop_tracking() -> BulkKind:
    from shipsync.bulk.tracking_switch import stop_tracking

    return stop_tracking()


def _resume_tracking() -> BulkKind:
    from shipsync.bulk.tracking_switch import resume_tracking

    return resume_tracking()


KINDS: dict[str, SpreadsheetKind] = {
    kind.name: kind
    for kind in (
        SpreadsheetKind(
            name="tracking-requests",
            help="Edit tracking requests keyed by id or request_number: their shipment's tags and ref_numbers (with _add "
            "and _remove columns, computed against the shipment's current lists), and the request's own ref_number.",
            run_name="Spreadsheet of tracking requests",
            template=(
                ("request_number", "tags", "tags_add", "tags_remove", "ref_numbers_add", "ref_number"),
                ("MSCU167822449", "priority; customs-hold", "", "", "PO-1001 | PO-1002", "REQ-77"),
                ("ONEY905798299", "", "reviewed", "customs-hold", "", ""),
            ),
            load=_tracking_requests,
        ),
        SpreadsheetKind(
            name="custom-field-definitions",
            help="Create or edit custom field definitions, one per row by api_slug, and add, relabel, reorder or remove options.",
            run_name="Spreadsheet of custom field definitions",
            template=(
                (
                    "entity_type",
                    "api_slug",
                    "display_name",
                    "data_type",
                    "description",
                    "required",
                    "max_length",
                    "pattern",
                    "default_format",
                    "options",
                ),
                (
                    "Container",
                    "customs_broker_code",
                    "Customs broker",
                    "enum",
                    "Which broker clears the container",
                    "",
                    "",
                    "",
                    "",
                    "acme=Acme Brokers; globex; initech",
                ),
                (
                    "Shipment",
                    "buyer_reference",
                    "Buyer reference",
                    "short_text",
                    "The buyer's order reference",
                    "yes",
                    "30",
                    "^[A-Z0-9-]+$",
                    "",
                    "",
                ),
            ),
            load=_custom_field_definitions,
        ),
        SpreadsheetKind(
            name="custom-fields",
            help="Set custom field values on shipments, containers and tracking requests: wide (a column per api_slug) or long "
            "(entity, api_slug, value) files.",
            run_name="Spreadsheet of custom fields",
            template=(
                ("container_number", "po_number", "priority", "hazardous", "customs_cleared_on", "handling_flags"),
                ("AKPU3545743", "PO-1001", "high", "no", "03/15/2026", "fragile; oversized"),
                ("DQGU3453713", "PO-1002", "normal", "yes", "2026-03-16", ""),
            ),
            load=_custom_fields,
            clears_empty=True,
        ),
        SpreadsheetKind(
            name="new-tracking",
            help="Start tracking: one row per number (request_type, request_number, scac or empty to detect the carrier, "
            "ref_numbers, shipment_tags, customer, shipment.SLUG / container.SLUG custom field values, container_number for the "
            "container values). Numbers already tracked are skipped.",
            run_name="Spreadsheet of new tracking",
            template=(
                (
                    "request_type",
                    "request_number",
                    "scac",
                    "ref_numbers",
                    "shipment_tags",
                    "customer",
                    "shipment.consignee",
                    "container_number",
                    "container.priority",
                ),
                (
                    "bill_of_lading",
                    "MAEU240187365",
                    "MAEU",
                    "PO-2001; PO-2002",
                    "priority",
                    "Globex Logistics",
                    "Globex",
                    "MRKU2733926",
                    "high",
                ),
                ("container", "MSKU9070323", "", "PO-2003", "", "", "", "", "normal"),
            ),
            load=_new_tracking,
        ),
        SpreadsheetKind(
            name="stop-tracking",
            help="Stop tracking shipments named by shipment_id, bill_of_lading or request_number (undo resumes them).",
            run_name="Spreadsheet stopping tracking",
            template=(
                ("request_number", "bill_of_lading"),
                ("MSCU167822449", ""),
                ("ONEY905798299", ""),
            ),
            load=_stop_tracking,
        ),
        SpreadsheetKind(
            name="resume-tracking",
            help="Resume tracking shipments named by shipment_id, bill_of_lading or request_number (undo stops them again).",
            run_name="Spreadsheet resuming tracking",
            template=(
                ("request_number", "bill_of_lading"),
                ("MSCU167822449", ""),
                ("ONEY905798299", ""),
            ),
            load=_resume_tracking,
        ),
    )
}


def spreadsheet_kind(name: str) -> SpreadsheetKind:
    if name not in KINDS:
        raise InputError(f"unknown kind {name!r}: use one of {', '.join(KINDS)}")
    return KINDS[name]


@cache
def kind_for(name: str) -> BulkKind:
    """The kind that plans and writes spreadsheets of `name` (InputError for an unknown name)."""
    return spreadsheet_kind(name).load()
