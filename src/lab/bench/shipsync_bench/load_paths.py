"""Three ways to load the same document pages (NDJSON, one response body per line): shipsync's and
DuckDB's own (`read_json` + `MERGE INTO`) into a lake each, dlt into a DuckDB file.

Run one path per process (`python -m shipsync_bench.load_paths PATH FILE WAREHOUSE`) so that each
peak RSS is its own. Prints one JSON line: seconds, peak RSS (MB), documents in the warehouse.
"""

from __future__ import annotations

import json
import resource
import sys
import time
from collections.abc import Iterator, Sequence
from itertools import islice
from pathlib import Path
from typing import Any

import duckdb
import orjson

from shipsync.api.declared import Declared
from shipsync.api.jsonapi import parse_page
from shipsync.api.related_models import Account, DocumentRepresentation, EmailSubmission, User
from shipsync.api.tracking_models import Container, Shipment
from shipsync.json_text import read_body
from shipsync.pull.documents import PAGES_PER_BATCH, load_documents  # batches as the pull flow writes them
from shipsync.pull.fetch import Fetched
from shipsync.warehouse.lake import connect_lake
from shipsync.warehouse.ledger import warehouse_run
from shipsync.warehouse.members import members_of
from shipsync.warehouse.schema_create import ensure_schema
from shipsync.warehouse_location import lake_location


def read_pages(path: Path) -> Iterator[dict[str, Any]]:
    with path.open("rb") as lines:
        for line in lines:
            yield orjson.loads(line)


def fetched_batches(pages_file: Path) -> Iterator[Fetched]:
    """The pages of the file in the pull's batches, as the pull's fetch gives them: each body read
    as the client reads a response (`read_body`, `parse_page`)."""
    with pages_file.open("rb") as lines:
        while batch := list(islice(lines, PAGES_PER_BATCH)):
            fetched = Fetched()
            for body in batch:
                fetched.add_page(parse_page(read_body(body)))
            del batch
            yield fetched
            del fetched  # one batch in memory at a time, as in the pull (not the last while the next is read)


def load_shipsync(pages_file: Path, warehouse: Path) -> None:
    """shipsync's own path: normalize each batch and stage it as the pull does, and commit the load
    as one run."""
    with warehouse_run(lake_location(str(warehouse)), "pull_documents", {"bench": True}) as run, run.step("pull_documents", {}):
        for fetched in fetched_batches(pages_file):
            load_documents(run.warehouse, fetched)
            del fetched


def _ts(expr: str) -> str:
    return f"CAST({expr} AS TIMESTAMPTZ)"


_SQL_OF_KIND = {"bool": "BOOLEAN", "int": "BIGINT", "float": "DOUBLE", "timestamp": "TIMESTAMPTZ", "date": "DATE"}


def _declared_sql(declaration: type[Declared]) -> str:
    """The typed columns of a declared table, extracted in SQL (no leftovers: a peer doing a little less)."""
    columns, values = ["id"], ["r->>'id'"]
    if declaration.kind_column:
        columns.append("kind")
        values.append("r->>'type'")
    for m in members_of(declaration):
        attr, rel = f"r->'attributes'->'{m.name}'", f"r->'relationships'->'{m.name}'->'data'"
        if m.kind == "ref":
            expressions = [(m.column, f"{rel}->>'id'")] + ([(f"{m.name}_type", f"{rel}->>'type'")] if m.polymorphic else [])
        elif m.kind == "refs":
            expressions = [(m.column, f"TRY_CAST(json_extract_string({rel}, '$[*].id') AS VARCHAR[])")]
        elif m.kind == "text":
            expressions = [(m.column, f"r->'attributes'->>'{m.name}'")]
        elif m.kind in _SQL_OF_KIND:
            expressions = [(m.column, f"TRY_CAST(r->'attributes'->>'{m.name}' AS {_SQL_OF_KIND[m.kind]})")]
        else:
            expressions = [(m.column, f"TRY_CAST({attr} AS {m.sql_type})")]
        for column, expression in expressions:
            columns.append(f'"{column}"')
            values.append(expression)
    select = (
        f"SELECT {', '.join(values)}, now(), now(), now(), now(), 'duckdb' FROM included "
        f"WHERE r->>'type' IN ({', '.join(repr(t) for t in declaration.resource_types)}) QUALIFY row_number() OVER (PARTITION BY r->>'id') = 1"
    )
    stamps = ["observed_at", "first_seen_at", "last_changed_at", "_synced_at", "_run_id"]
    return _merge(declaration.table_name, ["id"], [*columns, *stamps], select)


def _merge(table: str, keys: Sequence[str], columns: Sequence[str], select: str, *, update: bool = True) -> str:
    """DuckDB's MERGE INTO `table` from `select` (its columns named `columns`, in order), on `keys`;
    rows already there are updated unless `update` is false."""
    on = " AND ".join(f"t.{k} = s.{k}" for k in keys)
    sets = ", ".join(f"{c} = s.{c}" for c in columns if c not in keys)
    listed = ", ".join(columns)
    matched = f"WHEN MATCHED THEN UPDATE SET {sets} " if update else ""
    return (
        f"MERGE INTO {table} AS t USING ({select}) AS s ({listed}) ON {on} {matched}"
        f"WHEN NOT MATCHED THEN INSERT ({listed}) VALUES ({', '.join('s.' + c for c in columns)})"
    )


def load_duckdb(pages_file: Path, warehouse: Path) -> None:
    """DuckDB's own path into a lake of the same schema: read_json over the file, then MERGE INTO
    each table, committed as one transaction."""
    location = lake_location(str(warehouse))
    lake = connect_lake(location, read_only=False)
    con = lake.con
    ensure_schema(con, lake.alias, location.schema)
    con.execute("BEGIN TRANSACTION")
    con.execute(
        f"CREATE TEMP TABLE raw AS SELECT * FROM read_json('{pages_file}', format='newline_delimited', "
        "columns={data: 'JSON[]', included: 'JSON[]'}, maximum_object_size=1000000000)"
    )
    con.execute("CREATE TEMP TABLE docs AS SELECT unnest(data) AS d FROM raw")
    con.execute("CREATE TEMP TABLE included AS SELECT unnest(included) AS r FROM raw")
    a = "d->'attributes'"
    document_columns = [
        "id",
        "name",
        "document_type",
        "document_type_manual",
        "classification_notes",
        "source",
        "file_name",
        "file_content_type",
        "file_size_bytes",
        "created_at",
        "updated_at",
        "account_id",
        "user_id",
        "email_submission_id",
        "last_document_representation_id",
        "self_link",
        "download_link",
        "_synced_at",
        "_run_id",
    ]
    documents = (
        f"SELECT d->>'id', {a}->>'name', {a}->>'document_type', {a}->>'document_type_manual', "
        f"{a}->>'classification_notes', {a}->>'source', {a}->>'file_name', {a}->>'file_content_type', "
        f"CAST({a}->>'file_size_bytes' AS BIGINT), {_ts(a + chr(45) + '>>' + repr('created_at'))}, "
        f"{_ts(a + chr(45) + '>>' + repr('updated_at'))}, "
        "d->'relationships'->'account'->'data'->>'id', d->'relationships'->'user'->'data'->>'id', "
        "d->'relationships'->'email_submission'->'data'->>'id', "
        "d->'relationships'->'last_document_representation'->'data'->>'id', "
        "d->'links'->>'self', d->'links'->>'download', now(), 'duckdb' FROM docs"
    )
    con.execute(_merge("documents", ["id"], document_columns, documents))
    for table, rel, column in (
        ("document_shipments", "shipments", "shipment_id"),
        ("document_containers", "cargos", "container_id"),
    ):
        links = f"SELECT DISTINCT d->>'id', unnest(CAST(d->'relationships'->'{rel}'->'data' AS JSON[]))->>'id', now(), 'duckdb' FROM docs"
        # Links that exist are left as they are: updating them (their stamps only) fails on DuckLake
        # 1.5.5 with "Out of buffer" (measured: the second load of the same pages).
        con.execute(_merge(table, ["document_id", column], ["document_id", column, "_synced_at", "_run_id"], links, update=False))
    for declaration in (Account, User, Shipment, Container, EmailSubmission, DocumentRepresentation):
        con.execute(_declared_sql(declaration))
    con.execute("COMMIT")
    lake.close()


def load_dlt(pages_file: Path, warehouse: Path) -> None:
    """dlt with write_disposition='merge' on the same dicts: documents and included resources by type."""
    import dlt

    pipeline = dlt.pipeline(
        pipeline_name="shipsync_bench",
        destination=dlt.destinations.duckdb(str(warehouse)),
        dataset_name="bench",
        pipelines_dir=str(warehouse.parent / "dlt_pipelines"),
    )

    # Untyped unless the bench group installed dlt (then the ignore is unused): both pass mypy.
    @dlt.resource(name="documents", write_disposition="merge", primary_key="id")  # type: ignore[untyped-decorator,unused-ignore]
    def documents() -> Iterator[list[dict[str, Any]]]:
        for page in read_pages(pages_file):
            yield page["data"]

    @dlt.resource(write_disposition="merge", primary_key="id", table_name=lambda r: r["type"])  # type: ignore[untyped-decorator,unused-ignore]
    def included() -> Iterator[list[dict[str, Any]]]:
        for page in read_pages(pages_file):
            yield page["included"]

    pipeline.run([documents(), included()])


def documents_in(warehouse: Path, table: str) -> int:
    """Documents in the lake in `warehouse` (shipsync's and DuckDB's paths) or dlt's DuckDB file."""
    if table.startswith("bench."):
        con = duckdb.connect(str(warehouse), read_only=True)
        try:
            row = con.execute(f"SELECT count(*) FROM {table}").fetchone()
        finally:
            con.close()
    else:
        lake = connect_lake(lake_location(str(warehouse)), read_only=True)
        try:
            row = lake.con.execute(f"SELECT count(*) FROM {table}").fetchone()
        finally:
            lake.close()
    return int(row[0]) if row else 0


PATHS = {"shipsync": load_shipsync, "duckdb": load_duckdb, "dlt": load_dlt}


def main() -> None:
    kind, pages_file, warehouse = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    started = time.perf_counter()
    PATHS[kind](pages_file, warehouse)
    seconds = time.perf_counter() - started
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    table = "bench.documents" if kind == "dlt" else "documents"
    print(json.dumps({"seconds": seconds, "peak_rss_mb": peak_mb, "documents": documents_in(warehouse, table)}))


if __name__ == "__main__":
    main()
