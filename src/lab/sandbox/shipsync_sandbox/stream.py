"""Document pages exactly as the sandbox serves them, generated one page at a time.

For benchmarks at sizes the in-memory sandbox should not hold (100,000 documents): each page is a
`GET /documents?include=...` response body, built by the same code that seeds the sandbox.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

from shipsync_sandbox.related import related_of
from shipsync_sandbox.routes_read import INCLUDABLE
from shipsync_sandbox.seed import add_shipments, new_account, shipment_resource
from shipsync_sandbox.seed_documents import DocumentSource, make_document


def document_pages(total: int, *, page_size: int = 100, seed: int = 7) -> Iterator[dict[str, Any]]:
    rng = random.Random(f"{seed}/stream")
    for start in range(0, total, page_size):
        account, users = new_account(0, seed)
        end = min(total, start + page_size)
        first = start // 2
        shipments = [shipment_resource(rng, seed, 0, s) for s in range(first, end // 2 + 1)]
        add_shipments(account, rng, seed, 0, shipments)
        source = DocumentSource(seed, 0, shipments, users, timedelta(hours=3), first_shipment=first)
        documents = []
        for d in range(start, end):
            document, *related = make_document(account, source, d)
            documents.append(document)
            for resource in related:
                account.add_related(resource)
        yield {
            "data": documents,
            "included": related_of(account, documents, list(INCLUDABLE)),
            "links": {"self": f"/v2/documents?page[number]={start // page_size + 1}"},
        }
