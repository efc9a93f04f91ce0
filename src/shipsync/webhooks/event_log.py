"""The event log's side of `events load` and `events catch-up`: a run's copies of notifications
staged batch by batch, then merged into the lake when its run commits, judged against what the lake
holds at that moment.

Staging does everything that can fail on a copy's data (parsing, normalizing, casting to the
tables' types), so that a batch the casts refuse (`ValueRefusedError`) is split and the copy at
fault dead-lettered before anything of it is staged (`stage_copies`). Any other error is a fault
of the code or the machine, not of a copy: it stops the run with nothing committed. The merge, replayed in the run's commit, then only
compares and writes. A delivered copy (from a spool) is new (its first copy in the run, and not in
the lake), a redelivery (the same body again) or a conflict (another body under a known id). A
listed copy (taken from the service's listing by `events catch-up`, see `catch_up`) is new, or
else nothing: its body is the listing's, not the delivery's (another `delivery_status`, fewer
included resources), so it is never compared with a delivered one. The first delivered copy of a
notification known only from the listing takes the listed copy's place: its row gets the delivered
body, its included resources replace the listed ones, and it refreshes the typed tables as a new
one does. Only new and such delivered ones go into `webhook_events` with their included resources,
refresh the typed tables (newer wins) and apply their `container.updated` changesets. Because a
commit that raced another writer is replayed against the newer lake (see
`warehouse.unit_of_work`), two hosts loading the same notification (two receivers, each with its
own spool, or a load and a catch-up) record it once: the second commit sees the first's row.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import duckdb
import pyarrow as pa

from shipsync.api.declared import Declared
from shipsync.errors import ValueRefusedError
from shipsync.json_text import body_key
from shipsync.warehouse.changesets import Changeset, apply_changesets, changesets_of, check_changesets
from shipsync.warehouse.declared_rows import declared_columns
from shipsync.warehouse.declared_tables import DECLARED_BY_TYPE
from shipsync.warehouse.unit_of_work import CommitContext, Warehouse
from shipsync.warehouse.upsert import SEQ, TableCounts, affected, merge_upsert, sql_types, to_arrow
from shipsync.webhooks.load_steps import REASON_CHARACTERS, Copy, DeadLetter, Parsed, parse_records

log = logging.getLogger("shipsync.webhooks")

EVENT_LOG_TABLES = ("webhook_events", "webhook_event_resources", "webhook_event_conflicts", "webhook_redeliveries")


_EVENTS = (
    "SELECT notification_id, event, delivery_status, CAST(created_at AS TIMESTAMPTZ) AS created_at, webhook_id, reference_type, "
    "reference_id, CAST(received_at AS TIMESTAMPTZ) AS received_at, CAST(payload AS JSON) AS payload, body_sha256, "
    "CAST(listed_at AS TIMESTAMPTZ) AS listed_at, _seq FROM _shipsync_incoming"
)
# What a delivery sets of a row known only from the listing: everything its body says.
_DELIVERED_COLUMNS = (
    "event",
    "delivery_status",
    "created_at",
    "webhook_id",
    "reference_type",
    "reference_id",
    "received_at",
    "payload",
    "body_sha256",
)
_RESOURCES = (
    "SELECT notification_id, _event_seq, type, id, CAST(attributes AS JSON) AS attributes, "
    "CAST(relationships AS JSON) AS relationships FROM _shipsync_incoming"
)


@dataclass
class EventLogStage:
    """A load's staged deliveries, and the one merge that puts them into the lake at commit."""

    warehouse: Warehouse
    loaded_at: datetime
    spool: str  # the spool's id: a segment's key in the lake is `<spool>/<segment>` (unique across hosts)
    listed: bool = False  # copies taken from the service's listing (`catch_up`), not delivered
    _seq: itertools.count[int] = field(default_factory=lambda: itertools.count(0))
    _staged: dict[str, list[str]] = field(default_factory=dict)  # events, resources, a declared table -> what `stage` returned per batch
    _changesets: list[tuple[int, Changeset]] = field(default_factory=list)

    def stage(self, parsed: Sequence[Parsed], dead: Sequence[DeadLetter], progress: Mapping[str, int]) -> None:
        """Stage one batch whole, or nothing of it: everything that can fail on a record's data
        (normalizing, casting to the lake's types) runs before anything is kept, and a failure
        raises with the stage as it was."""
        seqs = [next(self._seq) for _ in parsed]
        listed_at = self.loaded_at if self.listed else None
        prepared = {"events": (_events(parsed, seqs, listed_at), _EVENTS), "resources": (_resources(parsed, seqs), _RESOURCES)}
        prepared |= {table: (rows, "SELECT * FROM _shipsync_incoming") for table, rows in _entities(parsed, seqs).items()}
        changesets = _changesets_of(parsed, seqs)
        check_changesets(self.warehouse.con, [change for _, change in changesets])
        created: dict[str, str] = {}
        try:
            for what, (rows, select) in prepared.items():
                if rows.num_rows:
                    created[what] = self.warehouse.stage(what, rows, select=select)
        except BaseException:
            for name in created.values():
                self.warehouse.unstage(name)
            raise
        if created and not self._staged:
            self.warehouse.defer([*EVENT_LOG_TABLES, *_refreshed_tables()], self._merge)
        for what, name in created.items():
            self._staged.setdefault(what, []).append(name)
        self._changesets += changesets
        if dead:
            self.warehouse.append("webhook_dead_letters", self._dead_letters(dead))
        if progress:
            checkpoints = pa.table(
                {
                    "segment": [f"{self.spool}/{name}" for name in progress],
                    "offset": pa.array(list(progress.values()), pa.int64()),
                    "archived": pa.array([False] * len(progress), pa.bool_()),
                    "updated_at": pa.array([self.loaded_at] * len(progress), pa.timestamp("us", tz="UTC")),
                }
            )
            self.warehouse.upsert("webhook_spool_checkpoints", checkpoints)

    def _dead_letters(self, dead: Sequence[DeadLetter]) -> pa.Table:
        return pa.table(
            {
                "segment": [f"{self.spool}/{d.record.segment}" for d in dead],
                "end_offset": pa.array([d.record.end_offset for d in dead], pa.int64()),
                "notification_id": pa.array([d.notification_id for d in dead], pa.string()),
                "received_at": pa.array([_moment(d.record.received_at) for d in dead], pa.timestamp("us", tz="UTC")),
                "reason": [d.reason[:REASON_CHARACTERS] for d in dead],
                "body": pa.array([d.record.body for d in dead], pa.binary()),
                "dead_lettered_at": pa.array([self.loaded_at] * len(dead), pa.timestamp("us", tz="UTC")),
            }
        )

    def _all(self, what: str) -> str | None:
        names = self._staged.get(what)
        return self.warehouse.staged_union(names) if names else None

    # -- the merge, at commit ------------------------------------------------------------------

    def _merge(self, con: duckdb.DuckDBPyConnection, commit: CommitContext) -> dict[str, TableCounts]:
        counts: dict[str, TableCounts] = {}
        events = self._all("events")
        if events is None:
            return counts
        # Each staged copy's verdict (narrow: the bodies stay where they are staged). A listed copy is
        # new or nothing (`listed`); a delivered one is new, takes a listed copy's place
        # (`delivered`), or is judged against the first delivered body: a repeat or a conflict.
        con.execute(
            "CREATE OR REPLACE TEMP TABLE _verdicts AS "
            "WITH ranked AS (SELECT notification_id, _seq, body_sha256, listed_at IS NOT NULL AS listed, "
            "row_number() OVER (PARTITION BY notification_id ORDER BY _seq) AS copy, "
            f"first_value(body_sha256) OVER (PARTITION BY notification_id ORDER BY _seq) AS first_body FROM {events}), "
            "known AS (SELECT notification_id, body_sha256, received_at IS NULL AND listed_at IS NOT NULL AS listed_only "
            f"FROM webhook_events WHERE notification_id IN (SELECT notification_id FROM {events})) "
            "SELECT r._seq, CASE WHEN r.listed AND (k.notification_id IS NOT NULL OR r.copy > 1) THEN 'listed' "
            "WHEN k.notification_id IS NULL AND r.copy = 1 THEN 'new' "
            "WHEN k.listed_only AND r.copy = 1 THEN 'delivered' "
            "WHEN CASE WHEN k.listed_only THEN r.first_body ELSE coalesce(k.body_sha256, r.first_body) END = r.body_sha256 "
            "THEN 'repeat' ELSE 'conflict' END AS verdict "
            "FROM ranked r LEFT JOIN known k USING (notification_id)"
        )
        verdicts = dict(con.execute("SELECT verdict, count(*) FROM _verdicts GROUP BY verdict").fetchall())
        judged = f"(SELECT e.*, v.verdict FROM {events} e JOIN _verdicts v USING (_seq))"
        # Statements only for the verdicts there are: each statement on a lake table costs catalog
        # queries, and a minute's load usually has no conflicts nor redeliveries.
        new, delivered, repeats, conflicts = (int(verdicts.get(v, 0)) for v in ("new", "delivered", "repeat", "conflict"))
        fresh = new + delivered  # copies whose rows go in
        if new:
            con.execute(
                "INSERT INTO webhook_events (notification_id, event, delivery_status, created_at, webhook_id, reference_type, "
                "reference_id, received_at, payload, loaded_at, body_sha256, listed_at) SELECT notification_id, event, "
                "delivery_status, created_at, webhook_id, reference_type, reference_id, received_at, payload, ?, body_sha256, listed_at "
                f"FROM {judged} WHERE verdict = 'new'",
                [commit.committed_at],
            )
        if delivered:
            assignments = ", ".join(f"{column} = d.{column}" for column in _DELIVERED_COLUMNS)
            con.execute(
                f"UPDATE webhook_events SET {assignments} FROM (SELECT * FROM {judged} WHERE verdict = 'delivered') d "
                "WHERE webhook_events.notification_id = d.notification_id"
            )
            con.execute(
                "DELETE FROM webhook_event_resources WHERE notification_id IN "
                f"(SELECT notification_id FROM {judged} WHERE verdict = 'delivered')"
            )
        counts["webhook_events"] = TableCounts(inserted=new, updated=delivered, unchanged=int(verdicts.get("listed", 0)))
        con.execute("CREATE OR REPLACE TEMP TABLE _new_seqs AS SELECT _seq FROM _verdicts WHERE verdict IN ('new', 'delivered')")
        if (resources := self._all("resources")) and fresh:
            inserted = affected(
                con,
                "INSERT INTO webhook_event_resources SELECT notification_id, type, id, attributes, relationships "
                f"FROM {resources} WHERE _event_seq IN (SELECT _seq FROM _new_seqs)",
            )
            counts["webhook_event_resources"] = TableCounts(inserted=inserted)
        for table in self._staged:
            if table in ("events", "resources"):
                continue
            source = f"(SELECT * FROM {self._all(table)} WHERE {SEQ} IN (SELECT _seq FROM _new_seqs))"
            counts[table] = (
                merge_upsert(con, table, source, run_id=commit.run_id, synced_at=commit.committed_at) if fresh else TableCounts()
            )
        new_seqs = {r[0] for r in con.execute("SELECT _seq FROM _new_seqs").fetchall()}
        changed = apply_changesets(con, [c for seq, c in self._changesets if seq in new_seqs], commit.committed_at)
        if changed:
            counts.setdefault("containers", TableCounts()).updated += changed
        if conflicts:
            con.execute(
                "INSERT INTO webhook_event_conflicts SELECT notification_id, received_at, payload, ? "
                f"FROM {judged} WHERE verdict = 'conflict'",
                [commit.committed_at],
            )
        counts["webhook_event_conflicts"] = TableCounts(inserted=conflicts)
        # One row per notification delivered again, at most: when it first came again. A row per copy
        # would let one captured delivery replayed many times fill the table; how many copies came is
        # the run's `duplicates` count.
        redelivered = 0
        if repeats:
            redelivered = affected(
                con,
                f"INSERT INTO webhook_redeliveries SELECT r.notification_id, min(r.received_at), ? FROM {judged} r "
                "WHERE r.verdict = 'repeat' AND NOT EXISTS (SELECT 1 FROM webhook_redeliveries k "
                "WHERE k.notification_id = r.notification_id) GROUP BY r.notification_id",
                [commit.committed_at],
            )
        counts["webhook_redeliveries"] = TableCounts(inserted=redelivered, unchanged=repeats - redelivered)
        con.execute("DROP TABLE IF EXISTS _verdicts")
        con.execute("DROP TABLE IF EXISTS _new_seqs")
        return counts


def _refreshed_tables() -> list[str]:
    """Every table an event may refresh (the declared tables of included resources)."""
    return sorted({d.table_name for d in DECLARED_BY_TYPE.values()})


def _moment(stamp: str | None) -> datetime | None:
    return datetime.fromisoformat(stamp) if stamp else None


def _events(parsed: Sequence[Parsed], seqs: Sequence[int], listed_at: datetime | None) -> pa.Table:
    return pa.table(
        {
            "notification_id": pa.array([p.notification_id for p in parsed], pa.string()),
            "event": pa.array([p.event for p in parsed], pa.string()),
            "delivery_status": pa.array([p.delivery_status for p in parsed], pa.string()),
            "created_at": pa.array([p.created_at for p in parsed], pa.string()),
            "webhook_id": pa.array([p.webhook_id for p in parsed], pa.string()),
            "reference_type": pa.array([p.reference_type for p in parsed], pa.string()),
            "reference_id": pa.array([p.reference_id for p in parsed], pa.string()),
            "received_at": pa.array([p.record.received_at for p in parsed], pa.string()),
            # The body as delivered (or as listed) is the payload: the service's retries resend the same bytes.
            "payload": pa.array([p.record.body for p in parsed], pa.binary()).cast(pa.string()),
            "body_sha256": pa.array([body_key(p.record.body) for p in parsed], pa.string()),
            "listed_at": pa.array([listed_at] * len(parsed), pa.timestamp("us", tz="UTC")),
            "_seq": pa.array(seqs, pa.int64()),
        }
    )


def _resources(parsed: Sequence[Parsed], seqs: Sequence[int]) -> pa.Table:
    rows = [(p.notification_id, seq, *resource) for p, seq in zip(parsed, seqs, strict=True) for resource in p.resources]
    names = ("notification_id", "_event_seq", "type", "id", "attributes", "relationships")
    return pa.table(
        {name: pa.array([row[n] for row in rows], pa.int64() if name == "_event_seq" else pa.string()) for n, name in enumerate(names)}
    )


def _entities(parsed: Sequence[Parsed], seqs: Sequence[int]) -> dict[str, pa.Table]:
    """The typed rows of every declared resource the notifications include, each stamped with its
    notification's `created_at` (`observed_at`), its id (`last_event_id`) and its order in the load
    (`SEQ`: of two copies equally new, the later notification's wins)."""
    by_declaration: dict[type[Declared], list[tuple[Parsed, int, Any]]] = {}
    for p, seq in zip(parsed, seqs, strict=True):
        for type_, _, resource in p.entities:
            if type_ in DECLARED_BY_TYPE:
                by_declaration.setdefault(DECLARED_BY_TYPE[type_], []).append((p, seq, resource))
    tables: dict[str, pa.Table] = {}
    for declaration, found in by_declaration.items():
        columns = declared_columns(
            declaration,
            [resource for _, _, resource in found],
            observed_at=[p.created_at for p, _, _ in found],
            event_ids=[p.notification_id for p, _, _ in found],
        )
        rows = to_arrow(declaration.table_name, columns, sql_types(declaration.table_name))
        tables[declaration.table_name] = rows.append_column(SEQ, pa.array([seq for _, seq, _ in found], pa.int64()))
    return tables


def _changesets_of(parsed: Sequence[Parsed], seqs: Sequence[int]) -> list[tuple[int, Changeset]]:
    return [
        (seq, change)
        for p, seq in zip(parsed, seqs, strict=True)
        for type_, _, resource in p.entities
        if type_ == "container_updated_event"
        for change in changesets_of(p.notification_id, p.created_at, {"included": [resource]})
    ]


def stage_copies(stage: EventLogStage, copies: Sequence[Copy], progress: Callable[[Sequence[Copy]], Mapping[str, int]]) -> None:
    """Stage copies whole; where a cast refuses a value, their halves one by one, down to the one copy
    at fault, which becomes a dead letter. `progress(copies)`: the spool checkpoints that move with
    them (none for listed copies)."""
    try:
        parsed, dead = parse_records(copies, stage.loaded_at)
        stage.stage(parsed, dead, progress(copies))
    except ValueRefusedError as error:
        if len(copies) > 1:
            middle = len(copies) // 2
            stage_copies(stage, copies[:middle], progress)
            stage_copies(stage, copies[middle:], progress)
            return
        copy = copies[0]
        parsed, _ = parse_records([copy], stage.loaded_at)
        reason = f"cannot be loaded: the warehouse refused a value: {error}"
        log.warning("event log: %s@%d dead-lettered: %s", copy.segment, copy.end_offset, reason)
        stage.stage([], [DeadLetter(copy, reason, parsed[0].notification_id if parsed else None)], progress(copies))
