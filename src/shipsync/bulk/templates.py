"""`shipsync template KIND`: a ready-to-fill example file with the headers and two rows, as
`bulk.kinds` declares them. The rows name records and fields the sandbox serves by default (`shipsync sandbox serve`, its first key), so a
template's dry run against it plans without problems."""

from __future__ import annotations

import csv
from pathlib import Path

from shipsync.bulk.kinds import spreadsheet_kind
from shipsync.safe_files import replacing_text


def write_template(kind: str, target: Path) -> Path:
    """The template `bulk.kinds` declares for `kind`, as CSV at `target` (InputError for an unknown kind)."""
    rows = spreadsheet_kind(kind).template
    with replacing_text(target, newline="", encoding="utf-8") as out:  # a planted link is replaced, not followed
        csv.writer(out).writerows(rows)
    return target
