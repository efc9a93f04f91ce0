"""Every example query in warehouse/README.md runs on a pulled warehouse and returns rows."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import pytest

from conftest import RunningSandbox, settings_for
from shipsync.pull.everything import pull_all
from shipsync.warehouse.schema import tables

DICTIONARY = Path(__file__).resolve().parents[1] / "warehouse" / "README.md"


def example_queries() -> list[str]:
    return re.findall(r"```sql\n(.*?)```", DICTIONARY.read_text(), flags=re.S)


def test_there_are_at_least_five_examples() -> None:
    assert len(example_queries()) >= 5


def test_every_table_is_documented() -> None:
    text = DICTIONARY.read_text()
    for table in tables():
        if not table.name.startswith("_"):
            assert table.name in text, table.name


@pytest.fixture
def pulled(sandbox: RunningSandbox, warehouse: Path) -> Path:
    # Make one document's extraction use an old schema version so that query has an answer.
    account = next(iter(sandbox.state.world.accounts.values()))
    representation = next(r for (t, _), r in account.related.items() if t == "document_representation")
    representation["attributes"]["schema_version"] = "commercial_invoice@2025-11-04"
    pull_all(settings_for(sandbox, warehouse))
    return warehouse


@pytest.mark.parametrize("index", range(len(example_queries())))
def test_example_query(pulled: Path, index: int) -> None:
    con = duckdb.connect(str(pulled), read_only=True)
    try:
        rows = con.execute(example_queries()[index]).fetchall()
    finally:
        con.close()
    assert rows, f"example query {index + 1} returned nothing"
