"""Seeded documents of a sandbox account, each with the email submission it arrived with and its
extraction (`document_representation`), in the shapes of the service's reference."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from shipsync_sandbox.reference import current_schema
from shipsync_sandbox.resources import Resource, stable_id
from shipsync_sandbox.timeline import iso
from shipsync_sandbox.world import Account

DOCUMENT_TYPES = ("commercial_invoice", "packing_list", "bill_of_lading", "arrival_notice")


@dataclass
class DocumentSource:
    """What an account's documents are made from: they are generated when first read (see
    `document_store.py`), so an account of 100,000 documents costs nothing until it is listed."""

    seed: int
    index: int
    shipments: list[Resource]
    users: list[Resource]
    spacing: timedelta  # between the creation of consecutive seeded documents
    first_shipment: int = 0  # `shipments` starts at this shipment number (pages streamed alone)


def make_document(account: Account, source: DocumentSource, d: int, created: datetime | None = None) -> list[Resource]:
    """Document `d` with its email submission and extraction, from its own seeded generator.

    `created` places a document added later (`/_admin/advance`); seeded ones are spread from the
    account's epoch."""
    seed, index, shipments, users = source.seed, source.index, source.shipments, source.users
    rng = random.Random(f"{seed}/{index}/document/{d}")
    doc_id = stable_id("document", seed, index, d)
    doc_type = DOCUMENT_TYPES[d % len(DOCUMENT_TYPES)]
    offset = timedelta(seconds=rng.randrange(max(1, int(source.spacing.total_seconds() * 2 / 3))))
    created = created or account.epoch + source.spacing * d + offset
    linked_shipments = [shipments[(d // 2 - source.first_shipment) % len(shipments)]]
    if rng.random() < 0.2:
        linked_shipments.append(shipments[rng.randrange(len(shipments))])
    linked_shipments = list({s["id"]: s for s in linked_shipments}.values())
    cargo_refs = [ref for s in linked_shipments for ref in s["relationships"]["containers"]["data"][: rng.randint(1, 3)]]
    user = users[d % len(users)]
    email = email_submission_resource(account, seed, index, d, doc_type, doc_id, user["id"], created)
    representation = representation_resource(seed, index, d, doc_type, created)
    source_kind = "email" if d % 3 else "upload"
    file_name = f"{doc_type}_{d:06d}.pdf"
    document = {
        "id": doc_id,
        "type": "document",
        "attributes": {
            "id": doc_id,
            "name": f"{doc_type.replace('_', ' ').title()} {d}",
            "document_type": doc_type,
            "document_type_manual": doc_type if d % 7 == 0 else None,
            "classification_notes": "classified automatically" if d % 5 else "reviewed by operator",
            "source": source_kind,
            "file_name": file_name,
            "file_content_type": "application/pdf",
            "file_size_bytes": rng.randint(20_000, 4_000_000),
            "created_at": iso(created),
            "updated_at": iso(created + timedelta(minutes=5)),
        },
        "relationships": {
            "account": {"data": {"type": "account", "id": account.id}},
            "user": {"data": {"type": "user", "id": user["id"]}},
            "email_submission": {"data": {"type": "email_submission", "id": email["id"]}},
            "last_document_representation": {"data": {"type": "document_representation", "id": representation["id"]}},
            "shipments": {"data": [{"type": "shipment", "id": s["id"]} for s in linked_shipments]},
            "cargos": {"data": cargo_refs},
        },
        "links": {"self": f"/v2/documents/{doc_id}", "download": f"/v2/documents/{doc_id}/download"},
    }
    return [document, email, representation]


def email_submission_resource(
    account: Account, seed: int, index: int, d: int, doc_type: str, doc_id: str, user_id: str, created: datetime
) -> Resource:
    """The email a document arrived with, as a document includes it (the reference's
    `document_email_submission`: the start of its body, not the body)."""
    domain = account.company_name.split()[0].lower()
    return {
        "id": stable_id("email_submission", seed, index, d),
        "type": "email_submission",
        "attributes": {
            "subject": f"{doc_type.replace('_', ' ').title()} {d}",
            "body_preview": f"Please find the {doc_type.replace('_', ' ')} attached.",
            "from": [f"docs+{d}@forwarder.example.com"],
            "to": [f"docs@{domain}.example.com"],
            "cc": [f"ops@{domain}.example.com"] if d % 4 == 0 else [],
            "message_id": f"<{d}.{index}@forwarder.example.com>",
            "sent_at": iso(created - timedelta(minutes=2)),
            "created_at": iso(created),
            "updated_at": iso(created),
        },
    }


def representation_resource(seed: int, index: int, d: int, doc_type: str, created: datetime) -> Resource:
    """The extraction of a document: the public schema version it follows and the extracted fields."""
    version, fields = current_schema(doc_type)
    samples: dict[str, Any] = {"string": f"{doc_type[:2].upper()}-{d:06d}", "number": 1000.0 + d, "integer": d % 40 + 1}
    return {
        "id": stable_id("document_representation", seed, index, d),
        "type": "document_representation",
        "attributes": {
            "schema_version": version,
            "payload": {name: samples[kind] for name, kind in fields.items()},
            "created_at": iso(created + timedelta(minutes=4)),
            "updated_at": iso(created + timedelta(minutes=4)),
        },
    }
