"""The ledger's reads of itself on a real lake: where an incremental read starts (one overlap),
which runs count as a success; and JSON text written and read back."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from pathlib import Path

import pytest

from shipsync.bulk.model import apply_flow
from shipsync.json_text import dumps, dumps_or_null, loads
from shipsync.warehouse.ledger import (
    SINCE_OVERLAP,
    changed_since,
    last_started,
    last_success,
    since_text,
    warehouse_run,
)
from support.lake import analyst, location


def _run(warehouse: Path, flow: str, status: str) -> datetime:
    with warehouse_run(location(warehouse), flow, {}) as run, run.step(flow, {}) as record:
        if status == "completed_with_errors":
            record.errors.append("one id given up")
        elif status == "failed":
            record.finish("failed")
    return record.started_at


def test_apply_flows_name_one_style() -> None:
    assert apply_flow("tracking-requests") == "apply_tracking_requests"


@pytest.mark.slow
def test_changed_since_reads_the_latest_success_of_any_flow_less_the_overlap(tmp_path: Path) -> None:
    warehouse = tmp_path / "w"
    flows = ("pull_tracking_requests", apply_flow("tracking-requests"))
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
