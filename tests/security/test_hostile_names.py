"""No SQL from data (issue 27, item 2): the hostile-name corpus (`support.hostile_names`) run
against every place shipsync builds SQL text from something it was given: the quoting helper
itself, the account's schema, the lake's catalog and data paths (and the statements printed for
analysts), the tables and files a last-layout manifest names, webhook deliveries (ids, kinds,
types, members, changesets), the report's spool path, and spreadsheets (headers, keys, values,
slugs, sheet names). Each place refuses a name with one line or keeps it whole as data; no
statement of the corpus ever runs (no canary file, `.pth` file or table appears)."""

from __future__ import annotations

import csv
import json
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import orjson
import pytest

from shipsync.bulk.apply import apply_file
from shipsync.config import Settings
from shipsync.errors import ConfigError, InputError, WarehouseError
from shipsync.report.build import build_report
from shipsync.warehouse.analyst import attach_statements
from shipsync.warehouse.identifiers import ident, literal
from shipsync.warehouse.import_file import import_warehouse
from shipsync.warehouse.lake import attach_statement
from shipsync.warehouse_location import lake_location
from shipsync.webhooks.framing import encode_record
from shipsync.webhooks.load import load_events
from support.hostile_names import Canaries
from support.lake import analyst
from support.sandboxes import RunningSandbox
from support.warehouse_rows import container_numbers

LAST_LAYOUT = Path(__file__).parents[1] / "fixtures" / "last-layout"


@pytest.fixture
def canaries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Canaries]:
    """The corpus, its marks in a folder of their own, which is the working folder meanwhile; the
    test fails if any mark is there at its end."""
    folder = tmp_path / "cwd"
    folder.mkdir()
    monkeypatch.chdir(folder)
    found = Canaries(folder)
    yield found
    assert found.fired() == []


def _one_statement(sql: str) -> None:
    assert len(duckdb.extract_statements(sql)) == 1, sql[:300]


def test_the_corpus_fires_where_a_name_is_pasted_unquoted(canaries: Canaries) -> None:
    """The control: pasted as text, the corpus's names do run their statement (so the tests below,
    which find no mark, would see one if a place pasted them)."""
    for pasted in (f"SELECT '{canaries.names()[0]}'", f'SELECT 1 AS "{canaries.names()[1]}"'):
        con = duckdb.connect()
        con.execute(pasted)
        assert sorted(canaries.fired(con)) == ["canary.csv", "memory.main.shipsync_canary", "shipsync_canary.pth"]
        for mark in (canaries.file, canaries.pth):
            mark.unlink()


def test_the_quoting_helper_keeps_every_name_whole_or_refuses_a_nul(canaries: Canaries) -> None:
    con = duckdb.connect()
    for name in canaries.names():
        if "\x00" in name:
            for quote in (ident, literal):
                with pytest.raises(WarehouseError, match="NUL character") as refused:
                    quote(name)
                assert "\n" not in str(refused.value)
            continue
        statement = f"CREATE TABLE {ident(name)} AS SELECT {literal(name)} AS {ident(name)}"
        _one_statement(statement)
        con.execute(statement)
        assert con.execute(f"SELECT {ident(name)} FROM {ident(name)}").fetchall() == [(name,)]
    tables = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    assert tables == {n for n in canaries.names() if "\x00" not in n}
    assert canaries.fired(con) == []


def test_an_account_that_is_no_plain_schema_name_is_refused_in_one_line(canaries: Canaries, tmp_path: Path) -> None:
    for name in canaries.names():
        if name in ("main",):
            continue
        with pytest.raises(ConfigError, match="SHIPSYNC_ACCOUNT") as refused:
            lake_location(str(tmp_path / "lake"), account=name)
        assert "\n" not in str(refused.value)


def test_hostile_catalogs_and_data_paths_stay_inside_their_quotes(canaries: Canaries, tmp_path: Path) -> None:
    """Every statement that opens a lake (shipsync's own and the ones printed for analysts) is one
    statement whatever the catalog string, file or data path; nothing is run."""
    for name in canaries.names():
        if "\x00" in name:  # no setting can hold one: the environment cannot
            continue
        locations = [
            lake_location(f"ducklake:postgres:dbname=shipsync host={name}", data=f"s3://bucket/{name}"),
            lake_location(f"ducklake:sqlite:{tmp_path / 'catalogs' / name[:200]}", data=str(tmp_path / name[:200])),
        ]
        for location in locations:
            _one_statement(attach_statement(location, read_only=True, alias="lake_1"))
            for statement in attach_statements(location):
                _one_statement(statement)


def _notification(name: str, n: int) -> bytes:
    """A signed-shape delivery whose ids, kind, types, member names and values are `name`."""
    shipment = {
        "id": f"s-{n}-{name}",
        "type": "shipment",
        "attributes": {"bill_of_lading_number": name, "tags": [name, "hot"], name: name},
        "relationships": {name: {"data": {"id": name, "type": name}}},
    }
    container = {"id": f"c-{n}", "type": "container", "attributes": {"number": name, "pod_arrived_at": "2026-05-11T18:00:00Z"}}
    changeset = {
        "id": f"cu-{n}",
        "type": "container_updated_event",
        "attributes": {"changeset": {name: [None, name], "pickup_appointment_at": [None, name]}, "timestamp": "2026-05-11T19:00:00Z"},
        "relationships": {"container": {"data": {"id": f"c-{n}", "type": "container"}}},
    }
    odd = {"id": name, "type": name, "attributes": {name: [name]}}
    data = {
        "id": f"n-{n}-{name}",
        "type": "webhook_notification",
        "attributes": {"id": f"n-{n}-{name}", "event": name, "delivery_status": name, "created_at": "2026-05-11T18:30:00Z"},
        "relationships": {"reference_object": {"data": {"id": name, "type": name}}, "webhook": {"data": {"id": name, "type": "webhook"}}},
    }
    return orjson.dumps({"data": data, "included": [shipment, container, changeset, odd]})


@pytest.mark.slow
def test_a_lake_its_deliveries_and_its_report_under_hostile_names(canaries: Canaries, tmp_path: Path) -> None:
    """One lake in a folder named with every quote, comment and statement end, its spool in another:
    deliveries whose every name is from the corpus load as data (ids and values whole), the
    statements printed for analysts open it, and the report (whose SQL names the spool's folder)
    is written. Names a folder cannot hold are in the deliveries only."""
    hostile = "l'a\"ke; -- $$ ? \u202e\uff07"  # a folder entry holds no /
    lake = lake_location(str(tmp_path / hostile))
    spool = tmp_path / f"spool {hostile}"
    spool.mkdir(mode=0o700)
    names = [n for n in canaries.names() if len(n) < 1_000]  # the long one: in the quoting test
    (spool / "segment-00000000000000000001-1.spool").write_bytes(
        b"".join(encode_record(_notification(name, n), 0) for n, name in enumerate(names))
    )
    (spool / "quarantine").mkdir(mode=0o700)
    (spool / "quarantine" / "1778524200000000000-1.bin").write_bytes(b"[]")

    report = load_events(lake, spool)

    assert report.loaded + report.dead_letters == len(names) and report.loaded > 0
    with analyst(lake) as con:
        loaded = {r[0] for r in con.execute("SELECT notification_id FROM webhook_events").fetchall()}
        dead = con.execute("SELECT reason FROM webhook_dead_letters").fetchall()
        numbers = {r[0] for r in con.execute("SELECT number FROM containers").fetchall()}
        tags = {r[0] for r in con.execute("SELECT unnest(tags) FROM shipments").fetchall()}
        assert canaries.fired(con) == []
    assert loaded | {f"n-{n}-{name}" for n, name in enumerate(names) if "\x00" in name} == {f"n-{n}-{name}" for n, name in enumerate(names)}
    assert all("\n" not in reason for (reason,) in dead), dead
    kept = {name for name in names if "\x00" not in name}
    assert kept <= numbers and kept <= tags  # values whole, as sent

    printed = duckdb.connect()
    for statement in attach_statements(lake):
        printed.execute(statement)
    assert printed.execute("SELECT count(*) FROM webhook_events").fetchone() == (len(loaded),)
    assert canaries.fired(printed) == []

    page = build_report(lake, tmp_path / "report.html", spool=spool, now=datetime(2026, 5, 20, tzinfo=UTC))
    quarantined = next(o for o in page.outcomes if o.chart.key == "delivery_health")
    assert quarantined.rows > 0, quarantined


@pytest.fixture
def old(tmp_path: Path) -> Path:
    shutil.copytree(LAST_LAYOUT, tmp_path / "old")
    return tmp_path / "old" / "shipsync.duckdb"


def _manifest(old: Path) -> Path:
    return old.parent / "shipsync.published" / "current.json"


@pytest.mark.slow
def test_a_manifest_another_account_can_write_is_validated_before_use(canaries: Canaries, old: Path, tmp_path: Path) -> None:
    """Table names from the manifest never reach SQL unless they are the lake's own; a malformed
    manifest is one line naming the file; a file name with quotes in it is read as that file."""
    path = _manifest(old)
    original: dict[str, Any] = json.loads(path.read_text())
    target = lake_location(str(tmp_path / "lake"))
    shapes: list[Any] = [
        {**original, "tables": {**original["tables"], **{name: original["tables"]["documents"] for name in canaries.names()}}},
        {**original, "tables": [1]},
        {**original, "tables": {"documents": 1}},
        {**original, "tables": {"documents": {"files": "data/x.parquet"}}},
        {**original, "tables": {"documents": {"files": [{"path": 1}]}}},
        {**original, "tables": {"documents": {"files": [{"path": None}]}}},
        {**original, "tables": None},
        [original],
        "tables",
    ]
    for shape in shapes:
        path.write_text(json.dumps(shape))
        with pytest.raises(InputError) as refused:
            import_warehouse(target, old)
        message = str(refused.value)
        assert "\n" not in message and ("current.json" in message or "has no place" in message), message

    # A publication file whose name would end a quoted path is read as the file it is.
    documents = original["tables"]["documents"]
    folder = path.parent
    for entry in documents["files"]:
        renamed = Path(entry["path"]).with_name(f"x'); {canaries.statement()}; --.parquet".replace("/", "_"))
        (folder / entry["path"]).rename(folder / renamed)
        entry["path"] = str(renamed)
    path.write_text(json.dumps(original))
    imported = import_warehouse(target, old)
    assert imported.rows["documents"] == documents["rows"] > 0


@pytest.mark.slow
def test_spreadsheet_names_and_values_are_data(canaries: Canaries, pulled: tuple[RunningSandbox, Settings], tmp_path: Path) -> None:
    """Headers, keys, values and slugs from the corpus: an unknown header refuses the file in one
    line; hostile keys and slugs are problems on their rows; hostile values are sent and stored as
    typed; nothing is run."""
    _, settings = pulled
    names = [n for n in canaries.names() if len(n) < 1_000]
    number = container_numbers(settings.warehouse, 1)[0]
    sheet = tmp_path / "hostile.csv"

    def write(rows: list[list[str]]) -> Path:
        with sheet.open("w", newline="", encoding="utf-8") as out:
            csv.writer(out).writerows(rows)
        return sheet

    with pytest.raises(InputError) as refused:
        apply_file(settings, "custom-fields", write([["container_number", *names], [number, *["x"] * len(names)]]), dry_run=True)
    assert "\n" not in str(refused.value) and str(refused.value).startswith(f"{sheet}: "), refused.value

    keyed = write([["container_number", "po_number"], *[[name, "PO"] for name in names]])
    unknown = apply_file(settings, "custom-fields", keyed, dry_run=True)
    assert len(unknown.problems) == len(names) and not [c for c in unknown.changes if c.action != "skip"]

    slugs = write([["container_number", "api_slug", "value"], *[[number, name, "x"] for name in names]])
    assert len(apply_file(settings, "custom-fields", slugs).problems) == len(names)

    # A field of free text, its name and description from the corpus (created, then edited).
    header = ["entity_type", "api_slug", "display_name", "data_type", "description"]
    created = apply_file(settings, "custom-field-definitions", write([header, ["Container", "note", names[0], "short_text", names[1]]]))
    edited = apply_file(settings, "custom-field-definitions", write([header, ["Container", "note", names[2], "short_text", names[3]]]))
    assert [c.status for c in created.changes + edited.changes if c.action != "skip"] == ["applied", "applied"]

    values = [n for n in names if "\x00" not in n]
    numbers = container_numbers(settings.warehouse, len(values))
    assert len(numbers) == len(values)
    noted = write([["container_number", "note"], *[[number, value] for number, value in zip(numbers, values, strict=True)]])
    applied = apply_file(settings, "custom-fields", noted)
    assert not applied.problems and {c.status for c in applied.changes} == {"applied"}, applied.problems
    with analyst(settings.warehouse) as con:
        stored = con.execute(
            "SELECT c.number, CAST(f.value AS VARCHAR) FROM custom_fields f JOIN containers c ON c.id = f.entity_id "
            "WHERE f.api_slug = 'note'"
        ).fetchall()
        described = con.execute("SELECT display_name, description FROM custom_field_definitions WHERE api_slug = 'note'").fetchall()
        assert canaries.fired(con) == []
    assert dict((number, json.loads(value)) for number, value in stored) == dict(zip(numbers, values, strict=True))
    assert described == [(names[2], names[3])]
