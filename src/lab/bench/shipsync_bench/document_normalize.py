"""How long documents take to normalize and to write, in the pull's batches (50 pages of 100).

`python -m shipsync_bench.document_normalize [DOCUMENTS] [PAGES_FILE]`: the sandbox's document pages
(generated once into PAGES_FILE, NDJSON, and read from it on later runs so that two versions of the
code see the same input), then `document_page_columns` over every batch (best of 3 passes), then one
write of every batch into a fresh warehouse. Prints one JSON line of seconds, wall-clock and CPU
(the process's, all threads): on a shared machine the CPU figures are the steadier ones.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from itertools import islice
from pathlib import Path
from typing import Any

import orjson

from shipsync.pull.documents import PAGES_PER_BATCH
from shipsync.warehouse.ledger import warehouse_run
from shipsync.warehouse.load import write_batch
from shipsync.warehouse.normalize import document_page_columns
from shipsync.warehouse_location import lake_location
from shipsync_sandbox.stream import document_pages

Pages = list[dict[str, Any]]


def pages_of(total: int, path: Path) -> Pages:
    if not path.exists():
        path.write_bytes(b"".join(orjson.dumps(page) + b"\n" for page in document_pages(total)))
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def batches_of(pages: Pages) -> list[tuple[list[dict[str, Any]], list[dict[str, Any]]]]:
    it = iter(pages)
    found = []
    while chunk := list(islice(it, PAGES_PER_BATCH)):
        found.append(([d for p in chunk for d in p["data"]], [r for p in chunk for r in p["included"]]))
    return found


def main() -> None:
    total = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    path = Path(sys.argv[2]) if len(sys.argv) > 2 else Path(tempfile.gettempdir()) / f"shipsync-document-pages-{total}.ndjson"
    batches = batches_of(pages_of(total, path))
    stamp = "2026-01-01T00:00:00+00:00"
    passes, cpu_passes = [], []
    for _ in range(3):
        started, cpu = time.perf_counter(), time.process_time()
        for data, included in batches:
            document_page_columns(data, included, stamp)
        passes.append(time.perf_counter() - started)
        cpu_passes.append(time.process_time() - cpu)
    with tempfile.TemporaryDirectory(prefix="shipsync-bench-") as tmp:
        warehouse = lake_location(str(Path(tmp) / "warehouse"))
        started, cpu = time.perf_counter(), time.process_time()
        with warehouse_run(warehouse, "pull_documents", {"bench": True}) as run, run.step("pull_documents", {}):
            for data, included in batches:
                owners = [str(d["id"]) for d in data]
                columns = document_page_columns(data, included, stamp)
                write_batch(run.warehouse, columns, link_owners={"document_shipments": owners, "document_containers": owners})
        written, written_cpu = time.perf_counter() - started, time.process_time() - cpu
    figures = {
        "normalize_seconds": min(passes),
        "normalize_cpu_seconds": min(cpu_passes),
        "normalize_and_write_seconds": written,
        "normalize_and_write_cpu_seconds": written_cpu,
    }
    print(json.dumps({"documents": total} | {name: round(value, 3) for name, value in figures.items()}))


if __name__ == "__main__":
    main()
