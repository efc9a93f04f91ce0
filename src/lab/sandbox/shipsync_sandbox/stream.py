"""Document pages exactly as the sandbox serves them, generated one page at a time.

For benchmarks at sizes the in-memory sandbox should not hold (100,000 documents): each page is a
`GET /documents?include=...` response body, built by the same code that seeds the sandbox.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

from shipsync_sandbox.related import related_of
from shipsync_sandbox.routes_read import INCLUDABLE
from shipsync_sandbox.seed import add_shipments, new_account, shipment_resource
from shipsync_sandbox.seed_documents import DocumentSource, make_document
from shipsync_sandbox.timeline import REFERENCE_START


def document_pages(total: int, *, page_size: int = 100, seed: int = 7, start: datetime = REFERENCE_START) -> Iterator[dict[str, Any]]:
    """Pages of a world that starts at `start` (fixed by default: a benchmark reads the same pages any day)."""
    rng = random.Random(f"{seed}/stream")
    for offset in range(0, total, page_size):
        account, users = new_account(0, seed, start)
        end = min(total, offset + page_size)
        first = offset // 2
        shipments = [shipment_resource(rng, account.epoch, seed, 0, s) for s in range(first, end // 2 + 1)]
        add_shipments(account, rng, seed, 0, shipments)
        source = DocumentSource(seed, 0, shipments, users, timedelta(hours=3), first_shipment=first)
        documents = []
        for d in range(offset, end):
            document, *related = make_document(account, source, d)
            documents.append(document)
            for resource in related:
                account.add_related(resource)
        yield {
            "data": documents,
            "included": related_of(account, documents, list(INCLUDABLE), "documents"),
            "links": {"self": f"/v2/documents?page[number]={offset // page_size + 1}"},
        }
