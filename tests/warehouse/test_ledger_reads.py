"""The ledger's reads of itself on a real DuckDB file: where an incremental read starts (one overlap,
old and new apply names), which runs count as a success; and JSON text written and read back."""

from __future__ import annotations

import re
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import get_args

from shipsync.json_text import dumps, dumps_or_null, loads
from shipsync.warehouse.ledger import (
    APPLY_FLOWS,
    SINCE_OVERLAP,
    FlowName,
    apply_flows,
    changed_since,
    finish_run,
    last_started,
    last_success,
    since_text,
    start_run,
)


def _run(warehouse: Path, flow: str, status: str) -> datetime:
    record = start_run(warehouse, flow, {})  # type: ignore[arg-type]  # older ledgers hold other names
    finish_run(warehouse, record, status)  # type: ignore[arg-type]
    return record.started_at


def test_apply_flows_name_one_style_then_the_older_spelling() -> None:
    assert apply_flows("tracking-requests") == ("apply_tracking_requests", "apply_tracking-requests")


def test_changed_since_reads_the_latest_success_of_any_flow_less_the_overlap(tmp_path: Path) -> None:
    warehouse = tmp_path / "w.duckdb"
    flows = ("pull_tracking_requests", *apply_flows("tracking-requests"))
    assert changed_since(warehouse, *flows) is None  # no warehouse yet: read everything
    _run(warehouse, "pull_tracking_requests", "completed")
    older_apply = _run(warehouse, "apply_tracking-requests", "completed_with_errors")  # a ledger from before the rename
    _run(warehouse, "apply_tracking_requests", "failed")  # a failed run is no point to read from
    assert changed_since(warehouse, *flows) == since_text(older_apply - SINCE_OVERLAP)
    newest = _run(warehouse, "apply_tracking_requests", "completed")
    assert changed_since(warehouse, *flows) == since_text(newest - SINCE_OVERLAP)


def test_last_started_filters_by_status_only_when_asked(tmp_path: Path) -> None:
    warehouse = tmp_path / "w.duckdb"
    done = _run(warehouse, "refresh_definitions", "completed")
    failed = _run(warehouse, "refresh_definitions", "failed")
    assert last_started(warehouse, ["refresh_definitions"]) == failed
    assert last_started(warehouse, ["refresh_definitions"], ["completed"]) == done
    assert last_success(warehouse, "refresh_definitions") == done
    assert last_started(warehouse, ["other"]) is None


def test_json_text_is_canonical_and_reads_back() -> None:
    value = {"b": [1, {"d": None, "c": "x"}], "a": True}
    assert dumps(value) == '{"a":true,"b":[1,{"c":"x","d":null}]}'
    assert loads(dumps(value)) == value
    assert loads(value) is value  # already parsed (DuckDB hands JSON back parsed at times)
    assert dumps_or_null(None) is None and dumps(None) == "null"
    assert dumps({"at": datetime(2026, 1, 2), "n": Decimal("1.50")}) == '{"at":"2026-01-02T00:00:00","n":"1.50"}'


def test_the_ledger_names_each_run_as_its_prefect_flow_is_named() -> None:
    """A pull or webhook flow and the ledger rows it writes share a name, so an operator can go
    from one to the other; the ledger's closed set of names covers every such flow."""
    flows_dir = Path(__file__).resolve().parents[2] / "flows"
    prefect_names = {m for f in flows_dir.glob("*.py") for m in re.findall(r'@flow\(name="([a-z_]+)"', f.read_text())}
    recording = {n for n in prefect_names if n.startswith("pull_") or n.endswith("_webhook")} - {"pull_all"}
    assert recording and recording <= set(get_args(FlowName))
    assert set(APPLY_FLOWS.values()) <= set(get_args(FlowName))
