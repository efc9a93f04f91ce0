"""`shipsync template KIND` files are accepted by their kind as they are."""

from __future__ import annotations

from pathlib import Path

import pytest

from shipsync.bulk.kinds import KINDS, kind_for
from shipsync.bulk.lookup import Knowledge
from shipsync.bulk.reader import read_sheet
from shipsync.bulk.templates import TEMPLATES, write_template


def test_every_kind_has_a_template() -> None:
    assert set(TEMPLATES) == set(KINDS)


@pytest.mark.parametrize("kind", sorted(TEMPLATES))
def test_a_template_passes_its_kinds_header_checks(kind: str, tmp_path: Path) -> None:
    sheet = read_sheet(write_template(kind, tmp_path / f"{kind}.csv"))
    kind_for(kind).check_structure(sheet)


def test_the_definitions_template_plans_without_problems(tmp_path: Path) -> None:
    sheet = read_sheet(write_template("custom-field-definitions", tmp_path / "d.csv"))
    changes, problems = kind_for("custom-field-definitions").plan(sheet, Knowledge(), clear_empty=False)
    assert not problems and [c.after["entity_type"] for c in changes] == ["Container", "Shipment"]
    assert changes[0].payload["options"][0] == {"label": "Acme Brokers", "value": "acme", "position": 0}
