"""A year of webhook deliveries about N documents' containers, spooled as the receiver spools them.

Each page of documents (as `sandbox/stream.document_pages` serves them) gets the journeys of its
containers and the events of its shipments' tracking requests, played by the sandbox's own
simulation (`journeys.simulate`: every event kind of a journey in its proportions, each delivery
with the full records as of its event), enveloped as the sandbox's `Deliverer` sends them
(`deliver.delivery`: the reference object first in `included`, an id stable per event) and framed
with the event's time as the time it was received. Records go to segments of the receiver's size,
so `events load` reads the year as it would read a receiver's.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from shipsync.api.jsonapi import refs_of, relationship
from shipsync.webhooks.framing import encode_record
from shipsync.webhooks.spool import SpoolSizes
from shipsync_sandbox.deliver import delivery
from shipsync_sandbox.journey_plan import PlanBook
from shipsync_sandbox.journeys import simulate
from shipsync_sandbox.seed import tracking_request_resource
from shipsync_sandbox.timeline import REFERENCE_START, epoch_of
from shipsync_sandbox.world import Account

SEGMENT_BYTES = SpoolSizes().segment_bytes


def spooled_journeys(pages: Iterable[dict[str, Any]], *, containers: int = 10**9, seed: int | None = None) -> Iterator[bytes]:
    """Spool records (as the receiver writes them) of the journeys of up to `containers` containers
    of each document page: the deliveries a webhook of the account would receive."""
    records: list[bytes] = []
    played: set[str] = set()

    def emit(account: Account, kind: str, reference: dict[str, object], included: list[dict[str, object]], at: str) -> None:
        body = orjson.dumps(delivery(account, 0, "wh-bench", kind, reference, included, at))
        received_ns = int(datetime.fromisoformat(at).timestamp()) * 10**9
        records.append(encode_record(body, 0, received_ns))

    for number, page in enumerate(pages, start=1):
        account = Account(id="bench", company_name="bench", clock=REFERENCE_START, epoch=epoch_of(REFERENCE_START))
        account.plans = PlanBook()
        for resource in page["included"]:
            account.add_related(resource)
        # Adjacent pages share a shipment (each with boxes of its own): its journeys are the first page's.
        shipments = [s for s in account.of_type("shipment") if s["id"] not in played]
        played.update(s["id"] for s in shipments)
        for shipment in shipments:  # journeys planned for the boxes the documents name
            boxes = [box_id for _, box_id in refs_of(relationship(shipment, "containers"))]
            account.shipment_of.update(dict.fromkeys(boxes, str(shipment["id"])))
            account.plans.register(shipment, boxes)
        # As the sandbox seeds an account: half its shipments tracked by a request (a quarter of
        # them failed), whose awaiting-manifest, succeeded and stopped events the journeys send.
        requests = random.Random(f"bench/{number}/tracking_requests")
        for n, shipment in enumerate(shipments[: len(shipments) // 2]):
            request = tracking_request_resource(requests, account.epoch, 0, number, n, shipment)
            account.tracking_requests[request["id"]] = request
        simulate(account, emit, containers=containers, seed=number if seed is None else seed)
        yield from records
        records.clear()


class SegmentWriter:
    """Spool records into segments of about `segment_bytes` each (as a receiver closes them), in a
    private spool folder. Segments are named like a receiver's (`segment-<ns>-<pid>`), from the
    writer's start time: they sort in the order written, and after any segment written before."""

    def __init__(self, spool: Path, segment_bytes: int = SEGMENT_BYTES) -> None:
        spool.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.spool, self.segment_bytes = spool, segment_bytes
        self.records = 0
        self._pending: list[bytes] = []
        self._size = 0
        self._segments = 0
        self._started_ns = time.time_ns()

    def write(self, records: Iterable[bytes]) -> None:
        for record in records:
            self._pending.append(record)
            self._size += len(record)
            self.records += 1
            if self._size >= self.segment_bytes:
                self.close()

    def close(self) -> None:
        """Write what is pending as a segment of its own."""
        if self._pending:
            (self.spool / f"segment-{self._started_ns + self._segments:020d}-1.spool").write_bytes(b"".join(self._pending))
            self._segments += 1
            self._pending, self._size = [], 0
