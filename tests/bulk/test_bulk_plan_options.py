"""Unit tests of the options planner (`bulk.plan_options`): a cell's option list becomes the creates,
updates and deletes that make a definition's options that list, and nothing when they already are."""

from __future__ import annotations

from shipsync.bulk.lookup import Definition, Option
from shipsync.bulk.plan_options import new_options, option_changes, parse_options


def definition(*options: tuple[str, str, int]) -> Definition:
    return Definition("d-1", "priority", "Container", "enum", {}, [Option(f"o-{v}", v, label, pos) for v, label, pos in options])


def test_a_cell_is_read_in_order_with_labels_and_its_problems_named() -> None:
    wanted, problems = parse_options("low; high=Very High;  ;low; =Nothing")
    assert [(w.value, w.label, w.position) for w in wanted] == [("low", None, 0), ("high", "Very High", 1)]
    assert problems == ["option 'low' is listed twice", "'=Nothing' names no option value"]  # an empty part is no option


def test_a_new_definitions_options_get_labels_derived_from_their_values() -> None:
    wanted, _ = parse_options("in_transit; AtPort; done=Finished")
    assert [o["label"] for o in new_options(wanted)] == ["In Transit", "AtPort", "Finished"]


def test_the_same_options_plan_nothing() -> None:
    current = definition(("low", "Low", 1), ("high", "High", 2))
    wanted, _ = parse_options("low; high")
    assert option_changes(3, current, wanted) == []


def test_options_are_added_after_the_last_without_moving_the_others() -> None:
    current = definition(("low", "Low", 1), ("high", "High", 2))
    (create,) = option_changes(3, current, parse_options("low; high; urgent")[0])
    assert (create.action, create.field, create.after) == ("create", "urgent", {"label": "Urgent", "value": "urgent", "position": 3})
    assert create.row == 3 and create.entity_type == "custom_field_option"


def test_removed_relabelled_and_reordered_options() -> None:
    current = definition(("low", "Low", 0), ("mid", "Mid", 1), ("high", "High", 2))
    changes = option_changes(7, current, parse_options("high=Top; low")[0])
    by_value = {c.field: c for c in changes}
    assert by_value["mid"].action == "delete" and by_value["mid"].resource_id == "o-mid"
    assert by_value["high"].action == "update" and by_value["high"].after == {"label": "Top", "position": 0}
    assert by_value["low"].after == {"label": "Low", "position": 1} and by_value["low"].before == {"label": "Low", "position": 0}
