"""Whether `shipsync up` pulls everything at start: only while the warehouse has no pulled data (no
lake yet, or a lake that only other runs wrote)."""

from __future__ import annotations

from pathlib import Path

from shipsync.orchestration.first_pull import never_pulled
from shipsync.pull.documents import pull_documents
from shipsync.warehouse.unit_of_work import open_warehouse
from support.sandboxes import SandboxFactory, settings_for


def test_only_a_warehouse_with_no_pulled_data_gets_a_first_pull(make_sandbox: SandboxFactory, warehouse: Path) -> None:
    settings = settings_for(make_sandbox(documents=5), warehouse)
    assert never_pulled(settings.lake)  # no lake at all
    with open_warehouse(settings.lake):  # made by a writer that pulls nothing (the event log's load, a register)
        pass
    assert settings.lake.exists() and never_pulled(settings.lake)
    pull_documents(settings)
    assert not never_pulled(settings.lake)
    assert never_pulled(settings_for(make_sandbox(documents=5), warehouse, account="other").lake)  # each account's own
