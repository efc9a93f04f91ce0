"""What a run's results say: a row's status from its cells (partly applied names the cells not
written), one results file per input, and problems summarised by kind with their first cells."""

from __future__ import annotations

from pathlib import Path

from shipsync.bulk.model import Change, Problem
from shipsync.bulk.record import problem_groups, results_path, row_outcomes, run_kind


def test_a_row_with_some_cells_written_is_partly_applied_naming_the_others() -> None:
    changes = [Change(2, "container", "c-1", "po_number", "create", None, "PO-1", status="applied")]
    problems = [Problem(2, "priority", "rush", "not an option"), Problem(3, "priority", "rush", "not an option")]
    outcomes = row_outcomes(changes, problems)
    assert outcomes[2][0] == "partly applied" and outcomes[2][1].startswith("not applied: priority; ")
    assert outcomes[3][0] == "rejected"
    dry = row_outcomes([Change(2, "container", "c-1", "po_number", "create", None, "PO-1")], problems[:1])
    assert dry[2][0] == "partly planned"


def test_inputs_of_one_name_and_runs_of_one_input_keep_results_of_their_own() -> None:
    assert results_path(Path("d/tags.xlsx"), "custom-fields") != results_path(Path("d/tags.csv"), "custom-fields")
    assert results_path(Path("d/tags.csv"), "custom-fields") == Path("d/tags.csv.custom-fields.results.csv")
    kinds = [run_kind(kind, dry) for kind in ("stop-tracking", "resume-tracking") for dry in (False, True)]
    assert len({results_path(Path("d/done.csv"), k) for k in kinds}) == 4


def test_problems_are_grouped_by_kind_with_their_first_cells() -> None:
    problems = [Problem(n, "po_number", f"PO-{n}", f"the same field of this container is set in row {n - 100}") for n in range(102, 1102)]
    problems.append(Problem(5, "priority", "rush", "'rush' is not an option"))
    failed = Change(7, "container", "c-9", "po_number", "create", None, "x", status="failed", detail="422 at /data/attributes/value")
    groups = problem_groups([failed], problems)
    assert [(g.status, g.column, g.count) for g in groups] == [
        ("rejected", "po_number", 1000),
        ("rejected", "priority", 1),
        ("failed", "po_number", 1),
    ]
    assert groups[0].reason == "the same field of this container is set in row N" and len(groups[0].examples) == 3
    assert groups[1].reason == "… is not an option"
