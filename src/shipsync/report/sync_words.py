"""The sync's health in the words people use: each kind of run by what it does ("Daily pull"), when
it last ran and whether that went fine, never a flow's snake_case name."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from shipsync.bulk.kinds import KINDS
from shipsync.bulk.model import apply_flow
from shipsync.pull.everything import EVERY_PULL
from shipsync.report.tables import ago

# What each kind of run in the ledger (`sync_runs.flow`) does, said to a reader: the pulls as
# `pull.resources` declares them, the spreadsheets as `bulk.kinds` does, the others here. A kind missing here (a newer shipsync's) is
# said from its name.
RUN_NAMES = {
    **{resource.flow: resource.said for resource in EVERY_PULL},
    **{apply_flow(kind.name): kind.run_name for kind in KINDS.values()},
    "apply_undo": "Undo of a spreadsheet",
    "refresh_definitions": "Custom field definitions refresh",
    "register_webhook": "Webhook registration",
    "delete_webhook": "Webhook removal",
    "load_events": "Webhook events load",
    "catch_up_events": "Missed webhook events catch-up",
    "import_warehouse": "Warehouse import",
    "maintain_warehouse": "Warehouse maintenance",
}
ENDINGS = {"completed": "fine", "completed_with_errors": "finished with errors", "failed": "failed"}


def run_name(flow: str) -> str:
    return RUN_NAMES.get(flow) or flow.replace("_", " ").strip().capitalize() or "(unnamed run)"


def _runs(count: int) -> str:
    return "1 run" if count == 1 else f"{count:,} runs"


def sync_line(row: dict[str, Any], now: datetime, days: int) -> str:
    """`Daily pull: last ran 2 h ago, fine (30 runs in 30 days, none failed).`"""
    if row["what"] == "webhook_events":
        newest = ago(row["last_success"], now)
        return f"Webhook events: the newest loaded {newest} ({row['runs']:,} received in {days} days)."
    ending = ENDINGS.get(row["last_status"] or "", "still running, or cut off")
    said = f"{run_name(row['what'])}: last ran {ago(row['last_started'], now)}, {ending}"
    if row["last_status"] not in ("completed", "completed_with_errors"):
        said += f"; last success {ago(row['last_success'], now)}"
    failed = row["failed"] or 0
    said += f" ({_runs(row['runs'])} in {days} days, {'none' if not failed else f'{failed:,}'} failed)."
    return said
