"""Incremental walks of newest-first listings: each record's stamp, the mark a run leaves in the
ledger, and where the next walk may stop.

Documents and shipments are listed newest created first, containers most recently refreshed first
(their refresh times are `pod_last_tracking_request_at` and `shipment_last_tracking_request_at`).
A walk reads pages down to the last run's mark minus a margin and stops after the first page that
ends older than that: everything after it is older still. The mark is the newest stamp a
successful run read, kept in its ledger row's parameters, and never goes backwards.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
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


def reaches(cutoff: str | None, stamp: Stamp) -> Callable[[Page], bool] | None:
    """Whether a page of the newest-first listing ends older than `cutoff`; None: read to the end."""
    if cutoff is None:
        return None
    limit = datetime.fromisoformat(cutoff)

    def last(page: Page) -> bool:
        moments = [m for m in map(stamp, page.data) if m is not None]
        return bool(moments) and min(moments) < limit

    return last


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
