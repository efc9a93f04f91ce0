"""CSV intake: shipsync's row-by-row reader beside pandas as shipsync read CSVs before (its peer),
on a plain file and on issue 27's hostile one (one line of commas, then 300 short lines).

Each read runs in a process of its own, so that its peak RSS is its own (the imports included,
~120 MB). The peer is `pandas.read_csv` called as `shipsync.bulk.csv_input` called it until the
reader became bounded: every row padded to the widest line, every cell a string, then stripped.
"""

from __future__ import annotations

import csv
import io
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from shipsync_bench.bulk_bench import write_wide_file
from shipsync_bench.results import BenchResult, at_most, under

HOSTILE_SHORT_LINES = 300


def _pandas_rows(path: Path) -> list[list[str]]:
    """The previous reader: the widest physical line's width, pandas' C parser, cells stripped."""
    import pandas as pd

    text = path.read_bytes().decode("utf-8")
    width = max((line.count(",") for line in text.splitlines()), default=0) + 1
    frame = pd.read_csv(
        io.StringIO(text),
        sep=",",
        header=None,
        names=range(width),
        dtype=str,
        keep_default_na=False,
        na_filter=False,
        skip_blank_lines=False,
        quoting=csv.QUOTE_MINIMAL,
        engine="c",
    )
    return [[cell.strip() for cell in row] for row in frame.to_numpy().tolist()]


def read_in_process(reader: str, path: Path) -> dict[str, object]:
    """One read of `path` by `reader` (`shipsync`: read_sheet; `pandas`: the previous reader)."""
    from shipsync.bulk.reader import read_sheet
    from shipsync.errors import InputError

    started = time.perf_counter()
    try:
        rows = len(read_sheet(path).rows) if reader == "shipsync" else len(_pandas_rows(path)) - 1
        outcome = f"read {rows:,} rows"
    except InputError as exc:
        outcome = f"refused: {str(exc).removeprefix(f'{path}: ')}"
    return {
        "seconds": time.perf_counter() - started,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "outcome": outcome,
    }


def _measure(reader: str, path: Path) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-m", "shipsync_bench.csv_bench", reader, str(path)], capture_output=True, text=True, check=True, timeout=1800
    )
    figures: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def _number(figures: dict[str, object], name: str) -> float:
    value = figures[name]
    assert isinstance(value, int | float)
    return float(value)


def intake(rows: int = 100_000, hostile_width: int = 20_000) -> list[BenchResult]:
    """Read a rows x 9 CSV with each reader, then the hostile file with each."""
    with tempfile.TemporaryDirectory(prefix="shipsync-bench-") as tmp:
        plain = Path(tmp) / "wide.csv"
        write_wide_file(plain, rows)
        hostile = Path(tmp) / "hostile.csv"
        hostile.write_text("container_number" + "," * hostile_width + "\n" + "CSQU3054383,PO-1\n" * HOSTILE_SHORT_LINES)
        size = f"{hostile.stat().st_size / 1000:.0f} KB"
        ours, theirs = _measure("shipsync", plain), _measure("pandas", plain)
        refused, padded = _measure("shipsync", hostile), _measure("pandas", hostile)
    if not str(refused["outcome"]).startswith("refused"):
        raise RuntimeError(f"the hostile CSV was not refused: {refused['outcome']}")
    previous = "pandas, as shipsync read CSVs before"
    return [
        at_most(
            f"read {rows:,} x 9 CSV (row by row, bounds checked; shaped)",
            _number(ours, "seconds"),
            "s",
            previous,
            _number(theirs, "seconds"),
            1.0,
        ),
        at_most("peak RSS reading that CSV", _number(ours, "peak_rss_mb"), "MB", previous, _number(theirs, "peak_rss_mb"), 1.0),
        under(
            f"refuse a {size} CSV of one {hostile_width:,}-comma line and {HOSTILE_SHORT_LINES} short ones "
            f"(pandas: {_number(padded, 'seconds'):.1f} s, {_number(padded, 'peak_rss_mb'):.0f} MB)",
            _number(refused, "seconds"),
            "s",
            1.0,
        ),
        at_most("peak RSS refusing it", _number(refused, "peak_rss_mb"), "MB", "pandas reading it", _number(padded, "peak_rss_mb"), 0.5),
    ]


if __name__ == "__main__":
    print(json.dumps(read_in_process(sys.argv[1], Path(sys.argv[2]))))
