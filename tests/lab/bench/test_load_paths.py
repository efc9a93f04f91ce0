"""The load benchmark's two lake paths load the same documents: shipsync's, and DuckDB's own
`read_json` + `MERGE INTO` into a lake of the same schema, which a second run updates in place."""

from __future__ import annotations

from pathlib import Path

import pytest

from shipsync_bench.load_bench import run_path, write_pages
from support.lake import analyst


# Slow: three loads, each in a process of its own (as the benchmark runs them).
@pytest.mark.slow
def test_both_paths_fill_a_lake_with_every_document_once(tmp_path: Path) -> None:
    pages = tmp_path / "pages.ndjson"
    write_pages(pages, 150)
    ours = run_path("shipsync", pages, tmp_path / "ours")
    duck = run_path("duckdb", pages, tmp_path / "duck")
    again = run_path("duckdb", pages, tmp_path / "duck")
    assert ours["documents"] == duck["documents"] == again["documents"] == 150
    counts = []
    for lake in ("ours", "duck"):
        with analyst(tmp_path / lake) as con:
            counts.append([con.execute(f"SELECT count(*) FROM {t}").fetchone() for t in ("containers", "shipments", "document_shipments")])
    assert counts[0] == counts[1] and all(c and c[0] for c in counts[0]), counts
