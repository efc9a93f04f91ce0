"""The ledger's reads of itself on a real lake: where an incremental read starts (one overlap),
which runs count as a success; and JSON text written and read back."""

from __future__ import annotations

import re
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import get_args

import pytest

from shipsync.json_text import dumps, dumps_or_null, loads
from shipsync.warehouse.ledger import (
    APPLY_FLOWS,
    SINCE_OVERLAP,
    FlowName,
    apply_flows,
    changed_since,
    last_started,
    last_success,
    since_text,
    warehouse_run,
)
from support.lake import analyst, location


def _run(warehouse: Path, flow: str, status: str) -> datetime:
    with warehouse_run(location(warehouse), flow, {}) as run, run.step(flow, {}) as record:  # type: ignore[arg-type]
        if status == "completed_with_errors":
            record.errors.append("one id given up")
        elif status == "failed":
            record.finish("failed")
    return record.started_at


def test_apply_flows_name_one_style() -> None:
    assert apply_flows("tracking-requests") == ("apply_tracking_requests",)


@pytest.mark.slow
def test_changed_since_reads_the_latest_success_of_any_flow_less_the_overlap(tmp_path: Path) -> None:
    warehouse = tmp_path / "w"
    flows = ("pull_tracking_requests", *apply_flows("tracking-requests"))
    _run(warehouse, "refresh_definitions", "completed")
    with analyst(warehouse) as con:
        assert changed_since(con, *flows) is None  # never read: read everything
    pulled = _run(warehouse, "pull_tracking_requests", "completed_with_errors")
    _run(warehouse, "apply_tracking_requests", "failed")  # a failed run is no point to read from
    with analyst(warehouse) as con:
        assert changed_since(con, *flows) == since_text(pulled - SINCE_OVERLAP)
    newest = _run(warehouse, "apply_tracking_requests", "completed")
    with analyst(warehouse) as con:
        assert changed_since(con, *flows) == since_text(newest - SINCE_OVERLAP)


def test_last_started_filters_by_status_only_when_asked(tmp_path: Path) -> None:
    warehouse = tmp_path / "w"
    done = _run(warehouse, "refresh_definitions", "completed")
    failed = _run(warehouse, "refresh_definitions", "failed")
    with analyst(warehouse) as con:
        assert last_started(con, ["refresh_definitions"]) == failed
        assert last_started(con, ["refresh_definitions"], ["completed"]) == done
        assert last_success(con, "refresh_definitions") == done
        assert last_started(con, ["other"]) is None


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
