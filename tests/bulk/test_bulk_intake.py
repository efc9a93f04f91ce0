"""A typed XLSX applied against the sandbox: typed cells arrive as values without guessing, a cell
of the wrong kind is a problem naming row and column, reading and planning report progress, and a
dry run's results file replaces a symlink planted at its path instead of writing through it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date, datetime
from pathlib import Path

import pytest

from shipsync.bulk.apply import apply_file
from shipsync.bulk.progress import Advance, RequestBudget
from shipsync.config import Settings
from shipsync_bench.xlsx_file import write_xlsx
from support.sandboxes import RunningSandbox, service_values
from support.warehouse_rows import container_numbers


class Stages:
    """A progress factory that remembers each stage, its total, what was advanced and whether its
    items are requests (their budget)."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, int | None, int]] = []
        self.budgets: dict[str, RequestBudget] = {}

    @contextmanager
    def __call__(self, label: str, total: int | None = None, requests: RequestBudget | None = None) -> Iterator[Advance]:
        done = [0]

        def advance(n: int) -> None:
            done[0] += n

        yield advance
        self.seen.append((label, total, done[0]))
        if requests is not None:
            self.budgets[label] = requests


@pytest.mark.slow
def test_typed_xlsx_applies_values_as_typed(pulled: tuple[RunningSandbox, Settings], tmp_path: Path) -> None:
    sandbox, settings = pulled
    first, second = container_numbers(settings.warehouse, 2)
    file = write_xlsx(
        tmp_path / "typed.xlsx",
        [
            ["Container Number", "Declared Value", "Customs Cleared On", "Delivery Appointment At", "Hazardous", "PO Number"],
            [first, 1250.5, date(2026, 3, 15), datetime(2026, 5, 11, 18, 30), False, "PO-1"],
            [second, date(2026, 3, 16), 46000, "2026-05-12T09:00:00Z", 2, 12345],
        ],
    )
    stages = Stages()
    report = apply_file(settings, "custom-fields", file, progress=stages)
    assert report.writes == 7
    assert stages.seen == [("reading typed.xlsx", None, 2), ("checking rows", 2, 2), ("writing 7 changes", 7, 7)]
    assert stages.budgets == {"writing 7 changes": RequestBudget(settings.rate)}  # writes are requests at the configured rate
    reasons = {(p.row, p.column): p.reason for p in report.problems}
    assert reasons == {
        (3, "declared_value"): "expected a number, got a date cell (2026-03-16)",
        (3, "customs_cleared_on"): "expected a date, got a number cell (46000)",
        (3, "hazardous"): "expected yes/no, got a number cell (2)",
    }
    values = service_values(sandbox)
    cid = next(c for (c, slug) in values if slug == "declared_value")
    assert values[(cid, "declared_value")] == 1250.5 and values[(cid, "customs_cleared_on")] == "2026-03-15"
    assert values[(cid, "delivery_appointment_at")] == "2026-05-11T18:30:00Z" and values[(cid, "hazardous")] is False  # no zone: UTC
    assert sorted(v for (_, slug), v in values.items() if slug == "po_number") == ["12345", "PO-1"]  # a number typed as a key or text


def test_dry_run_results_file_never_writes_through_a_planted_link(pulled: tuple[RunningSandbox, Settings], tmp_path: Path) -> None:
    _, settings = pulled
    number = container_numbers(settings.warehouse, 1)[0]
    file = write_xlsx(tmp_path / "tags.xlsx", [["container_number", "po_number"], [number, "=cmd|' /C calc'!A0"]])
    victim = tmp_path / "authorized_keys"
    victim.write_text("ssh-ed25519 AAAA keep-me\n")
    (tmp_path / "tags.xlsx.custom-fields.dry-run.results.csv").symlink_to(victim)
    report = apply_file(settings, "custom-fields", file, dry_run=True)
    assert victim.read_text() == "ssh-ed25519 AAAA keep-me\n"
    assert report.results_file is not None and not report.results_file.is_symlink()
    assert "'=cmd" in report.results_file.read_text(encoding="utf-8-sig")
