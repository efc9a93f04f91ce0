"""A journal line of a shape shipsync does not write is told by what the reading checks, not by
the errors Python raises on the way: the journal is left alone, and a bug in the reading is not
mistaken for a foreign file."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from shipsync.bulk.journal import read_journal
from shipsync.json_text import dumps

HEADER = {"run_id": "00000000-0000-4000-8000-00000000000a", "kind": "stop-tracking", "file": None, "sheet": None, "parameters": {}}
INTENT = {"row": 2, "entity_type": "shipment", "entity_id": "s-1", "field": "tracking", "action": "update", "resource_id": "s-1"}
IMAGE = {**INTENT, "before": "tracking", "after": "stopped"}


def journal(tmp_path: Path, lines: list[Any]) -> Any:
    path = tmp_path / "run.journal"
    path.write_text("".join(dumps(line) + "\n" for line in lines))
    fd = os.open(path, os.O_RDONLY)
    try:
        return read_journal(path, fd)
    finally:
        os.close(fd)


def test_a_whole_journal_reads_as_its_run(tmp_path: Path) -> None:
    run = journal(tmp_path, [{"run": HEADER}, {"seq": 0, "intent": IMAGE}, {"seq": 0, "status": "applied", "image": IMAGE, "detail": ""}])
    assert run is not None and [(c.entity_id, c.status) for c in run.changes] == [("s-1", "applied")]


@pytest.mark.parametrize(
    "lines",
    [
        [{"run": {**HEADER, "written_by": "a later version"}}],  # a member shipsync does not write
        [{"run": {"run_id": "x"}}],  # members missing
        [{"run": "a text"}],
        [{"run": HEADER}, {"intent": IMAGE}],  # a write without its number
        [{"run": HEADER}, {"seq": 0, "intent": {**IMAGE, "colour": "red"}}],
        [{"run": HEADER}, {"seq": 0, "intent": IMAGE}, {"seq": 0, "status": "exploded", "image": IMAGE}],
        [{"run": HEADER}, {"seq": 0, "intent": IMAGE}, {"seq": 0, "status": "applied", "image": [1, 2]}],
    ],
)
def test_a_line_of_another_shape_leaves_the_journal_unread(tmp_path: Path, lines: list[Any]) -> None:
    assert journal(tmp_path, lines) is None
