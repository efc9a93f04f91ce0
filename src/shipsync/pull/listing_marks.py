"""Incremental walks of listings: each record's stamp, the mark a run leaves in the ledger, and
where the next walk may stop.

A walk reads pages down to the last run's mark minus a margin. It may stop after the first page
that ends older than that only when everything below is older still, that is when the listing is
newest first by the walk's stamp. The reference declares that order for one listing only on
request (documents, `sort=-created_at`); for shipments (newest created first) and containers (a
sentence that contradicts itself, `docs/api-facts.md`) it describes an order but nothing makes it
a rule, and for webhook notifications it says none. So a walk stops early only when the pages it
has read show the order it relies on (`NewestFirst`): stamps that never rise, within a page and
from one page to the next, and fall at least once. Any other listing is read to its end.

Containers' stamps are their refresh times (`pod_last_tracking_request_at`,
`shipment_last_tracking_request_at`), the others' `created_at`. The mark is the newest stamp a
successful run read, kept in its ledger row's parameters, and never goes backwards.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import duckdb

from shipsync.api.jsonapi import JsonObject, Page
from shipsync.pull.steps import BatchOutcome
from shipsync.warehouse.coerce import utc_timestamp
from shipsync.warehouse.ledger import RunRecord, last_success_parameter

MARK = "newest_created_at"  # the ledger parameter a listing run leaves (its name predates containers' refresh stamps)
Stamp = Callable[[JsonObject], datetime | None]


def _instant(value: object) -> datetime | None:
    moment = utc_timestamp(value)
    return datetime.fromisoformat(moment) if moment else None


def created_at(record: JsonObject) -> datetime | None:
    """When the record was created, as an instant (None when absent or not a time)."""
    return _instant((record.get("attributes") or {}).get("created_at"))


def refreshed_at(container: JsonObject) -> datetime | None:
    """When the service last refreshed a container: the later of its two refresh times."""
    attributes = container.get("attributes") or {}
    moments = [_instant(attributes.get(name)) for name in ("pod_last_tracking_request_at", "shipment_last_tracking_request_at")]
    return max(filter(None, moments), default=None)


def newest(records: Iterable[JsonObject], stamp: Stamp) -> str | None:
    moment = max(filter(None, map(stamp, records)), default=None)
    return moment.isoformat() if moment else None


@dataclass
class NewestFirst:
    """Whether the pages a walk has read so far show a listing newest first by `stamp`: no stamp
    above the one before it (records without a stamp come last, as in a descending sort), and at
    least one below it (a page of equal stamps, or of one record, shows no order). Once broken,
    never shown again: a walk that saw the order fail reads to the end."""

    stamp: Stamp
    last: datetime | None = None
    unstamped: bool = False  # a record without a stamp was read: only such records may follow
    fell: bool = False
    broken: bool = False

    def read(self, page: Page) -> bool:
        """Take the page's records in listing order; whether the order holds on everything read."""
        for record in page.data:
            moment = self.stamp(record)
            if moment is None:
                self.unstamped = True
            elif self.unstamped or (self.last is not None and moment > self.last):
                self.broken = True
            else:
                self.fell = self.fell or (self.last is not None and moment < self.last)
                self.last = moment
        return self.shown

    @property
    def shown(self) -> bool:
        return self.fell and not self.broken


@dataclass
class DownTo:
    """Where an incremental walk may stop: after the first page that ends older than `cutoff`, when
    the pages read so far show the listing newest first; else at the listing's end. One instance
    follows one walk across all its batches."""

    cutoff: datetime
    stamp: Stamp
    order: NewestFirst = field(init=False)

    def __post_init__(self) -> None:
        self.order = NewestFirst(self.stamp)

    def last(self, page: Page) -> bool:
        ordered = self.order.read(page)
        moments = [m for m in map(self.stamp, page.data) if m is not None]
        return ordered and bool(moments) and min(moments) < self.cutoff


def down_to(cutoff: str | None, stamp: Stamp) -> DownTo | None:
    """The stop rule of a walk down to `cutoff`; None (no cutoff): read the whole listing."""
    return DownTo(datetime.fromisoformat(cutoff), stamp) if cutoff is not None else None


def last_page_of(walk: DownTo | None) -> Callable[[Page], bool] | None:
    return walk.last if walk is not None else None


def listing_cutoff(con: duckdb.DuckDBPyConnection, flow: str, margin: timedelta) -> tuple[str | None, str | None]:
    """The last mark of `flow` and where an incremental walk may stop (mark - margin); None: read all."""
    mark = _instant(last_success_parameter(con, flow, MARK))
    if mark is None:
        return None, None
    return mark.isoformat(), (mark - margin).isoformat()


def leave_mark(record: RunRecord, outcomes: Sequence[BatchOutcome], mark: str | None) -> None:
    """The run's mark: the newest stamp it read, never older than the last one (a listing may lag)."""
    seen = [datetime.fromisoformat(m) for m in (*(o.newest_stamp for o in outcomes), mark) if m]
    if seen:
        record.parameters[MARK] = max(seen).isoformat()
