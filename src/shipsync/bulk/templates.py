"""`shipsync template KIND`: a ready-to-fill example file with the headers and two rows. The rows
name records and fields the sandbox serves by default (`shipsync sandbox serve`, its first key), so a
template's dry run against it plans without problems."""

from __future__ import annotations

import csv
from pathlib import Path

from shipsync.safe_files import replacing_text

TEMPLATES: dict[str, list[list[str]]] = {
    "tracking-requests": [
        ["request_number", "tags", "tags_add", "tags_remove", "ref_numbers_add", "ref_number"],
        ["MSCU167822449", "priority; customs-hold", "", "", "PO-1001 | PO-1002", "REQ-77"],
        ["ONEY905798299", "", "reviewed", "customs-hold", "", ""],
    ],
    "custom-field-definitions": [
        [
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
        ],
        [
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
        ],
        [
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
        ],
    ],
    "custom-fields": [
        ["container_number", "po_number", "priority", "hazardous", "customs_cleared_on", "handling_flags"],
        ["AKPU3545743", "PO-1001", "high", "no", "03/15/2026", "fragile; oversized"],
        ["DQGU3453713", "PO-1002", "normal", "yes", "2026-03-16", ""],
    ],
    "new-tracking": [
        [
            "request_type",
            "request_number",
            "scac",
            "ref_numbers",
            "shipment_tags",
            "customer",
            "shipment.consignee",
            "container_number",
            "container.priority",
        ],
        ["bill_of_lading", "MAEU240187365", "MAEU", "PO-2001; PO-2002", "priority", "Globex Logistics", "Globex", "MRKU2733926", "high"],
        ["container", "MSKU9070323", "", "PO-2003", "", "", "", "", "normal"],
    ],
    "stop-tracking": [
        ["request_number", "bill_of_lading"],
        ["MSCU167822449", ""],
        ["ONEY905798299", ""],
    ],
    "resume-tracking": [
        ["request_number", "bill_of_lading"],
        ["MSCU167822449", ""],
        ["ONEY905798299", ""],
    ],
}


def write_template(kind: str, target: Path) -> Path:
    if kind not in TEMPLATES:
        from shipsync.errors import InputError

        raise InputError(f"unknown kind {kind!r}: use one of {', '.join(TEMPLATES)}")
    with replacing_text(target, newline="", encoding="utf-8") as out:  # a planted link is replaced, not followed
        csv.writer(out).writerows(TEMPLATES[kind])
    return target
