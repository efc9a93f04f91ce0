"""`events catch-up`: the notifications the receiver missed, from the service's listing into the
event log as if they had been delivered.

When the receiver was down longer than the service's redeliveries, the service's own answer is to
list the notifications again: `GET /webhook_notifications` (`include=reference_object`) holds
every notification sent to the account's webhooks, delivered or not. A catch-up walks that
listing and stages the notifications of the warehouse's own webhooks that the event log lacks
through the path a delivery takes (`event_log.stage_copies`: the same parser and limits, dedupe by
notification id, typed rows and freshness rules), then commits them as one snapshot. Every request
is made before the commit: staging keeps the rows in the run's files, the write transaction only
replays them.

A listed copy's body is the listing's notification with the reference object the listing carries
for it, `{"data": ..., "included": [...]}`. It is not the delivery's body (its `delivery_status`
says where the delivery ended, and the listing includes only the reference object), so the event
log never compares the two: a listed copy of a known notification changes nothing, and the first
delivery of a notification known only from the listing takes the listed copy's place (`event_log`).
The containers (with their shipments and transport events) that a delivery would also have
carried are read again by the incremental containers walk, in the same run, when the warehouse
walks containers at all.

The event log has **no gap until** a moment when every notification of its webhooks created before
it is in the log. A catch-up that listed down to where the last gap-free moment was makes the log
whole until the moment it began listing, and records that moment in its ledger row (`whole_until`).
A delivery shows the receiver was listening when it came. So the log had no gap until the later of
the last catch-up's `whole_until` and the newest delivery's `received_at` (`no_gap`). Without
`--since`, a catch-up lists from there less `MARGIN`: the service's redeliveries of notifications
made just before the receiver stopped, and clocks that disagree, both fit in it.

The walk takes every notification of its webhooks that the log lacks. The reference states no
order for the listing, so the walk ends early only where the pages it has read show the listing
newest first (`listing_marks.NewestFirst`): after the first page on which every notification is
settled (in the event log or its dead letters, or of another webhook) and was created before the
start, since below it is older still, and settled by the catch-ups and deliveries before. Listed
in any other order, the walk reads to the end.

A listed notification is held to a delivery's limits (`body_limits`: its size, depth and values):
one past them is a dead letter under its id, as a delivery past them would be refused, so it
neither stops the catch-up nor comes back in the next one, and the "no gap until" mark moves on.
A dead letter of one larger than a delivery may be keeps only the head of its body.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import duckdb
import msgspec

from shipsync.api.jsonapi import IncludedIndex, JsonObject, Page, ref_of, relationship
from shipsync.config import Settings
from shipsync.pull.documents import PAGES_PER_BATCH
from shipsync.pull.fetch import Fetched, fetch_pages
from shipsync.pull.listing_marks import NewestFirst, created_at, listing_cutoff
from shipsync.pull.steps import BatchOutcome, Progress, StepRunner, no_progress, outcome_of, page_through, run_direct
from shipsync.pull.tracking import LISTING_OVERLAP, pull_containers_step
from shipsync.warehouse.ledger import FlowName, RunRecord, WarehouseRun, last_success_parameter, warehouse_run
from shipsync.warehouse.unit_of_work import open_warehouse
from shipsync.warehouse_location import LakeLocation
from shipsync.webhooks.body_limits import MAX_BODY_BYTES, shape_of
from shipsync.webhooks.event_log import EventLogStage, stage_copies
from shipsync.webhooks.load_steps import DeadLetter

log = logging.getLogger("shipsync.webhooks")

FLOW: FlowName = "catch_up_events"
WHOLE_UNTIL = "whole_until"  # the ledger parameter a catch-up leaves: the moment it began listing
# Listed from this long before the last gap-free moment: the service retries a delivery up to 12
# times (it does not say over how long), and the service's clock and this host's may disagree. The
# margin must outlast both, yet stay a few pages of a busy account's notifications.
MARGIN = timedelta(hours=2)
INCLUDE = "reference_object"  # never `webhook`: a webhook's resource may carry its secret
LISTING_SEGMENT = "listing"  # a listed copy's dead letter is keyed `listing/<run id>`, its place in the walk
KEPT_OF_TOO_LARGE = 4096  # bytes of a too large listed body its dead letter keeps (its id is in the row)


@dataclass(frozen=True, slots=True)
class ListedCopy:
    """A notification taken from the listing, as the event log's parser takes a copy (`load_steps.Copy`)."""

    segment: str  # the catch-up run's id
    end_offset: int  # its place in the walk
    body: bytes
    received_at: str | None = None  # never received


@dataclass(frozen=True)
class NoGap:
    """When the event log last had no gap, and what says so."""

    until: datetime
    caught_up: datetime | None  # the last catch-up's `whole_until`
    delivered: datetime | None  # the newest delivery's `received_at`


def _moment(value: object) -> datetime | None:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            return None
        return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return None


def no_gap(con: duckdb.DuckDBPyConnection) -> NoGap | None:
    """The last moment the event log had no gap (see the module's docstring); None when nothing says."""
    caught_up = _moment(last_success_parameter(con, FLOW, WHOLE_UNTIL))
    row = con.execute("SELECT max(received_at) FROM webhook_events").fetchone()
    delivered = _moment(row[0]) if row else None
    known = [m for m in (caught_up, delivered) if m is not None]
    return NoGap(max(known), caught_up, delivered) if known else None


def event_log_no_gap(location: LakeLocation) -> NoGap | None:
    """`no_gap` of the lake at `location`, read-only (None when there is no lake yet)."""
    if not location.exists():
        return None
    with open_warehouse(location, read_only=True) as warehouse:
        return no_gap(warehouse.con)


def our_webhooks(con: duckdb.DuckDBPyConnection) -> frozenset[str]:
    """The webhooks whose notifications belong in the event log: those registered through shipsync
    (deleted ones too: what they were sent is theirs) and those the log's notifications came to."""
    rows = con.execute(
        "SELECT id FROM webhooks UNION SELECT DISTINCT webhook_id FROM webhook_events WHERE webhook_id IS NOT NULL"
    ).fetchall()
    return frozenset(str(row[0]) for row in rows)


def default_start(con: duckdb.DuckDBPyConnection) -> datetime | None:
    """Where a catch-up without `--since` lists from: the last gap-free moment less the margin; for a
    log that never had one, the first registration of its webhooks (nothing of theirs is older)
    less the margin; None: the whole listing."""
    found = no_gap(con)
    if found is not None:
        return found.until - MARGIN
    row = con.execute("SELECT min(coalesce(first_seen_at, observed_at)) FROM webhooks").fetchone()
    registered = _moment(row[0]) if row else None
    return registered - MARGIN if registered else None


def listed_body(notification: JsonObject, included: IncludedIndex) -> bytes:
    """A listed notification as the event log keeps it: the notification and the reference object
    the listing carried for it. Written at any depth the listing was read at (orjson stops at 254
    levels); RecursionError past that."""
    reference = included.resolve(relationship(notification, "reference_object"))
    return msgspec.json.encode({"data": notification, "included": [reference] if reference is not None else []})


def listed_copy(notification: JsonObject, included: IncludedIndex, run_id: str, place: int) -> ListedCopy | DeadLetter:
    """A listed notification as a copy for the event log, or as a dead letter under its id when its
    body is past a delivery's limits (`body_limits`)."""
    notification_id = str(notification.get("id"))
    try:
        body = listed_body(notification, included)
    except RecursionError:
        return DeadLetter(ListedCopy(run_id, place, b""), "body nested too deep to be written again", notification_id)
    if len(body) > MAX_BODY_BYTES:
        too_large = f"body of {len(body):,} bytes (at most {MAX_BODY_BYTES:,}, as a delivery); its first {KEPT_OF_TOO_LARGE:,} kept"
        return DeadLetter(ListedCopy(run_id, place, body[:KEPT_OF_TOO_LARGE]), too_large, notification_id)
    if problem := shape_of(body).problem():
        return DeadLetter(ListedCopy(run_id, place, body), f"body {problem}", notification_id)
    return ListedCopy(run_id, place, body)


def webhook_of(notification: JsonObject) -> str | None:
    found = ref_of(relationship(notification, "webhook"))
    return found[1] if found else None


@dataclass
class Walk:
    """One catch-up's walk down the listing: what it took, and where it stops."""

    con: duckdb.DuckDBPyConnection
    stage: EventLogStage
    ours: frozenset[str]
    since: datetime | None
    run_id: str
    listed: int = 0  # notifications read
    taken: int = 0  # staged: the event log lacked them
    known: int = 0  # in the event log (or its dead letters) already, or read twice in this walk
    foreign: int = 0  # of webhooks that are not the warehouse's
    _settled: set[str] = field(default_factory=set)
    _looked_up: set[str] = field(default_factory=set)
    _order: NewestFirst = field(default_factory=lambda: NewestFirst(created_at))

    def _look_up(self, notifications: Iterable[JsonObject]) -> None:
        """Which of these the event log holds already (in one read of the lake as committed)."""
        ids = list({str(n.get("id")) for n in notifications} - self._looked_up)
        if not ids:
            return
        rows = self.con.execute(
            "SELECT notification_id FROM webhook_events WHERE notification_id IN (SELECT unnest(?)) "
            "UNION SELECT notification_id FROM webhook_dead_letters WHERE notification_id IN (SELECT unnest(?))",
            [ids, ids],
        ).fetchall()
        self._settled.update(str(row[0]) for row in rows)
        self._looked_up.update(ids)

    def _settled_before_start(self, notification: JsonObject) -> bool:
        made = created_at(notification)
        settled = webhook_of(notification) not in self.ours or str(notification.get("id")) in self._settled
        return settled and made is not None and self.since is not None and made < self.since

    def last_page(self, page: Page) -> bool:
        """Whether the walk ends with this page (see the module's docstring)."""
        self._look_up(page.data)
        ordered = self._order.read(page)
        return ordered and bool(page.data) and all(self._settled_before_start(n) for n in page.data)

    def take(self, fetched: Fetched) -> None:
        """Stage the notifications of these pages that the event log lacks."""
        self._look_up(fetched.data)
        included = IncludedIndex.of(fetched.included)
        copies: list[ListedCopy] = []
        refused: list[DeadLetter] = []
        for notification in fetched.data:
            self.listed += 1
            notification_id = str(notification.get("id"))
            if webhook_of(notification) not in self.ours:
                self.foreign += 1
            elif notification_id in self._settled:
                self.known += 1
            else:
                self._settled.add(notification_id)  # a page shifted by a newer notification repeats one
                copy = listed_copy(notification, included, self.run_id, self.listed)
                if isinstance(copy, DeadLetter):
                    refused.append(copy)
                else:
                    copies.append(copy)
        self.taken += len(copies)
        if refused:
            self.stage.stage([], refused, {})
        if copies:
            stage_copies(self.stage, copies, lambda _: {})


def notification_pages(settings: Settings, walk: Walk, cursor: str | None) -> BatchOutcome:
    """A batch of the listing's pages, to its end or to the page that ends the walk."""
    listing = lambda client, start, pages: client.webhooks.notification_pages(include=INCLUDE, start=start, max_pages=pages)  # noqa: E731
    fetched = fetch_pages(settings, listing, cursor, PAGES_PER_BATCH, walk.last_page if walk.since else None)
    walk.take(fetched)
    return outcome_of(fetched)


@dataclass
class CatchUp:
    """What a catch-up did: its walk, and the ledger rows of its steps (counts filled at commit)."""

    since: datetime | None
    walk: Walk | None  # None: the warehouse knows no webhook of its own, nothing was listed
    records: list[RunRecord]

    @property
    def loaded(self) -> int:
        events = self.records[0].counts.get("webhook_events")
        return events.inserted if events else 0

    @property
    def dead_letters(self) -> int:
        dead = self.records[0].counts.get("webhook_dead_letters")
        return dead.inserted if dead else 0

    @property
    def requests(self) -> int:
        return sum(record.stats.requests for record in self.records)

    @property
    def whole_until(self) -> datetime | None:
        return _moment(self.records[0].parameters.get(WHOLE_UNTIL))


def catch_up_step(
    run: WarehouseRun,
    settings: Settings,
    *,
    since: datetime | None = None,
    runner: StepRunner = run_direct,
    progress: Progress = no_progress,
) -> CatchUp:
    """Walk the listing from `since` (else `default_start`) and stage what the event log lacks;
    then, when anything was, the incremental containers walk (what the deliveries would have carried)."""
    settings.require_api_key()
    began = datetime.now(UTC)
    start = since or default_start(run.con)
    ours = our_webhooks(run.con)
    parameters = {"since": start.isoformat() if start else None, "webhooks": len(ours)}
    with run.step(FLOW, parameters) as record:
        if not ours:
            log.warning("events catch-up: the warehouse knows no webhook of its own (register one with `shipsync webhooks register`)")
            return CatchUp(start, None, [record])
        stage = EventLogStage(run.warehouse, began, LISTING_SEGMENT, listed=True)
        walk = Walk(run.con, stage, ours, start, record.run_id)
        page_through(record, runner, progress, "notification-pages", notification_pages, settings, walk)
        record.parameters[WHOLE_UNTIL] = began.isoformat()
    records = [record]
    if walk.taken and listing_cutoff(run.con, "pull_containers", LISTING_OVERLAP)[0] is not None:
        records.append(pull_containers_step(run, settings, incremental=True, runner=runner, progress=progress))
    return CatchUp(start, walk, records)


def catch_up(
    settings: Settings,
    *,
    since: datetime | None = None,
    runner: StepRunner = run_direct,
    progress: Progress = no_progress,
) -> CatchUp:
    """`catch_up_step` as a run of its own: one snapshot when it commits."""
    settings.require_api_key()
    parameters = {"since": since.isoformat() if since else None}
    with warehouse_run(settings.lake, FLOW, parameters, flow_run_id=settings.flow_run_id) as run:
        done = catch_up_step(run, settings, since=since, runner=runner, progress=progress)
    return done


def parse_since(text: str) -> datetime:
    """`--since`: an ISO 8601 date or time (no offset: UTC)."""
    moment = _moment(text.strip()) if len(text.strip()) >= 10 else None
    if moment is None:
        raise ValueError(f"--since {text!r} is not a date or time: use ISO 8601, e.g. 2026-05-01 or 2026-05-01T06:00:00Z")
    return moment.astimezone(UTC)


def describe(done: CatchUp) -> Sequence[str]:
    """What a catch-up did, in lines for the command line and the flow's log."""
    start = f"since {done.since:%Y-%m-%d %H:%M:%S} UTC" if done.since else "the whole listing"
    if done.walk is None:
        return ["events catch-up: the warehouse knows no webhook of its own, nothing to catch up (shipsync webhooks register first)"]
    walk = done.walk
    lines = [
        f"events catch-up ({start}): {walk.listed} notification(s) listed in {done.records[0].stats.requests} request(s); "
        f"{done.loaded} missing from the event log now loaded, {walk.known} already there, "
        f"{walk.foreign} of other webhooks left out, {done.dead_letters} dead-lettered (see webhook_dead_letters)"
    ]
    if len(done.records) > 1:
        containers = done.records[1].counts.get("containers")
        refreshed = (containers.inserted + containers.updated) if containers else 0
        lines.append(f"containers walked again for what the deliveries would have carried: {refreshed} refreshed")
    if done.whole_until:
        lines.append(f"the event log has no gap until {done.whole_until:%Y-%m-%d %H:%M:%S} UTC")
    return lines
