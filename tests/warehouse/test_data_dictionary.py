"""Every example query in warehouse/README.md runs on a pulled warehouse and returns rows."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson
import pytest

from shipsync.bulk.apply import apply_file
from shipsync.pull.everything import pull_all
from shipsync.warehouse.schema import tables
from shipsync.webhooks.framing import encode_record
from shipsync.webhooks.load import load_events
from shipsync_sandbox.deliver import envelope
from shipsync_sandbox.journeys import simulate
from support.analyst_world import world
from support.lake import analyst, location, write_now
from support.sandboxes import SandboxFactory, settings_for

DICTIONARY = Path(__file__).resolve().parents[2] / "warehouse" / "README.md"


def example_queries() -> list[str]:
    return re.findall(r"```sql\n(.*?)```", DICTIONARY.read_text(), flags=re.S)


def test_there_are_at_least_five_examples() -> None:
    assert len(example_queries()) >= 5


def test_every_table_is_documented() -> None:
    text = DICTIONARY.read_text()
    for table in tables():
        if not table.name.startswith("_"):
            assert table.name in text, table.name


@pytest.fixture(scope="module")
def pulled(make_module_sandbox: SandboxFactory, module_env: Path) -> Path:
    """One pulled warehouse for every example query (they only read it)."""
    sandbox, warehouse = make_module_sandbox(), module_env / "warehouse"
    # Make one invoice's extraction follow an old schema version (its public version, as the service
    # names it) so that query has an answer.
    account = next(iter(sandbox.state.world.accounts.values()))
    invoice = next(d for d in account.documents.values() if d["attributes"]["document_type"] == "commercial_invoice")
    representation = account.related[("document_representation", invoice["relationships"]["last_document_representation"]["data"]["id"])]
    representation["attributes"]["schema_version"] = "2025.11.04"
    settings = settings_for(sandbox, warehouse)
    pull_all(settings)
    number = next(r["attributes"]["number"] for (t, _), r in sorted(account.related.items()) if t == "container")
    sheet = module_env / "tags.csv"
    sheet.write_text(f"container_number,priority,po_number\n{number},high,PO-1\nCSQU3054383,low,PO-2\n")
    apply_file(settings, "custom-fields", sheet)
    bodies: list[bytes] = []

    def emit(acct: Any, event: str, reference: dict[str, Any], included: list[dict[str, Any]], created_at: str) -> None:
        bodies.append(orjson.dumps(envelope("w", event, reference, [reference, *included], created_at)))

    simulate(account, emit, containers=3)
    spool = module_env / "spool"
    spool.mkdir(mode=0o700)
    bodies.append(b'{"data": {"type": "webhook_notification"}}')  # no id: a dead letter
    (spool / "segment-1.spool").write_bytes(b"".join(encode_record(b, 0) for b in bodies))
    load_events(location(warehouse), spool)
    world(warehouse)  # boxes at the terminal, at risk, with dwell times (the sandbox's journeys are over)
    return warehouse


@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(example_queries())))
def test_example_query(pulled: Path, index: int) -> None:
    con = analyst(pulled)
    try:
        rows = con.execute(example_queries()[index]).fetchall()
    finally:
        con.close()
    assert rows, f"example query {index + 1} returned nothing"


def dictionary_sections() -> dict[str, str]:
    """Each table's or view's entry (heading and text), by name; a `####` entry also holds its
    `###` section's own text (the typed tables' shared columns), and every entry the conventions."""
    text = DICTIONARY.read_text().split("## Example queries")[0]
    conventions = text.split("## Tables")[0]
    entries: dict[str, str] = {}
    names: list[str] = []
    section = ""  # the current `###` section's text before its first `####` entry
    in_section = False
    for line in text.splitlines():
        heading = re.match(r"^(#{2,4}) ([a-z_]*)(?: and ([a-z_]+))?", line)
        if heading:
            level, *titles = heading.groups()
            names = [n for n in titles if n]
            in_section = level != "####"
            section = line + "\n" if in_section else section
            for name in names:
                entries[name] = conventions + ("" if in_section else section) + line + "\n"
            continue
        if in_section:
            section += line + "\n"
        for name in names:
            entries[name] += line + "\n"
    return entries


def test_every_column_of_every_table_and_view_is_documented(tmp_path: Path) -> None:
    """Compares the dictionary with `information_schema`: each column named (in backticks) in its entry."""
    write_now(tmp_path / "w", {})
    with analyst(tmp_path / "w") as con:
        columns = con.execute(
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_catalog = current_database() "
            "AND table_schema = 'main' AND table_name NOT LIKE '\\_%' ESCAPE '\\' ORDER BY table_name, ordinal_position"
        ).fetchall()
    entries = dictionary_sections()
    undocumented = [f"{table}.{column}" for table, column in columns if f"`{column}`" not in entries.get(table, "")]
    assert not undocumented, undocumented
    assert {t for t, _ in columns} <= set(entries)
