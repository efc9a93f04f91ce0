"""`shipsync template KIND` files are accepted by their kind as they are."""

from __future__ import annotations

from pathlib import Path

import pytest

from shipsync.bulk.apply import apply_file
from shipsync.bulk.kinds import KINDS, kind_for
from shipsync.bulk.lookup import Knowledge
from shipsync.bulk.reader import read_sheet
from shipsync.bulk.templates import write_template
from shipsync.pull.documents import pull_documents
from support.sandboxes import SandboxFactory, settings_for


def test_every_kind_is_named_as_its_declaration_and_has_a_template() -> None:
    for name, declared in KINDS.items():
        assert kind_for(name).name == name and len(declared.template) == 3


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_template_passes_its_kinds_header_checks(kind: str, tmp_path: Path) -> None:
    sheet = read_sheet(write_template(kind, tmp_path / f"{kind}.csv"))
    kind_for(kind).check_structure(sheet)


def test_the_definitions_template_plans_without_problems(tmp_path: Path) -> None:
    sheet = read_sheet(write_template("custom-field-definitions", tmp_path / "d.csv"))
    changes, problems = kind_for("custom-field-definitions").plan(sheet, Knowledge(), clear_empty=False)
    assert not problems and [c.after["entity_type"] for c in changes] == ["Container", "Shipment"]
    assert changes[0].payload["options"][0] == {"label": "Acme Brokers", "value": "acme", "position": 0}


@pytest.mark.slow
def test_the_templates_name_records_the_default_sandbox_has(make_sandbox: SandboxFactory, warehouse: Path, tmp_path: Path) -> None:
    key = "sandbox-key-1"  # `shipsync sandbox serve` as it starts by default
    sandbox = make_sandbox(documents=200, api_keys=(key,))
    settings = settings_for(sandbox, warehouse, key=key)
    pull_documents(settings, all_documents=True)
    for kind in ("custom-fields", "tracking-requests", "stop-tracking", "new-tracking"):
        report = apply_file(settings, kind, write_template(kind, tmp_path / f"{kind}.csv"), dry_run=True)
        assert not report.problems, [p.describe() for p in report.problems]


def test_the_new_tracking_template_carries_the_columns_the_docs_show(tmp_path: Path) -> None:
    headers = read_sheet(write_template("new-tracking", tmp_path / "n.csv")).headers
    assert {"customer", "container_number"} <= set(headers)
    assert any(h.startswith("shipment.") for h in headers) and any(h.startswith("container.") for h in headers)
    documented = (Path(__file__).parents[2] / "docs" / "spreadsheets.md").read_text()
    assert ",".join(KINDS["new-tracking"].template[0]) in documented  # the docs show the template's header as it is
