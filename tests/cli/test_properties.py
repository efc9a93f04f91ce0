"""Property tests: JSON:API parsing and value validation never crash on any input, and what they
accept round-trips; the retry policy's properties live in test_api_policy.py."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shipsync.api.jsonapi import IncludedIndex, parse_errors, parse_page, ref_of, refs_of
from shipsync.bulk.cells import cell_value
from shipsync.values import FieldRules, ValueProblem, check_value
from shipsync_sandbox.value_rules import DATA_TYPES  # the service's data types, as the sandbox serves them

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)
resource_ids = st.text(min_size=1, max_size=12)
resource_types = st.sampled_from(["document", "container", "shipment", "account", "user"])


@st.composite
def resources(draw: st.DrawFn) -> dict[str, Any]:
    return {
        "id": draw(resource_ids),
        "type": draw(resource_types),
        "attributes": draw(st.dictionaries(st.text(max_size=8), json_values, max_size=3)),
    }


@given(json_values)
def test_parse_page_accepts_or_says_why(body: Any) -> None:
    try:
        page = parse_page(body)
    except ValueError as exc:
        assert str(exc)
    else:
        assert isinstance(page.data, list) and isinstance(page.included, list)


@given(json_values)
def test_errors_and_relationships_never_raise(body: Any) -> None:
    assert isinstance(parse_errors(body), tuple)
    ref_of(body)
    assert isinstance(refs_of(body), list)
    assert len(IncludedIndex.of(body if isinstance(body, list) else [body])) <= 1 + (len(body) if isinstance(body, list) else 0)


@pytest.mark.slow
@given(st.lists(resources(), max_size=8), st.lists(resources(), max_size=30), st.lists(json_values, max_size=3))
def test_well_formed_documents_keep_every_resource(data: list[dict[str, Any]], included: list[dict[str, Any]], junk: list[Any]) -> None:
    page = parse_page({"data": data, "included": [*included, *junk], "links": {"next": "/x?page=2"}})
    assert page.data == data
    index = IncludedIndex.of(page.included)
    # Every included resource resolves by (type, id); the last of duplicates wins; junk is dropped.
    for resource in included:
        found = index.get(resource["type"], resource["id"])
        assert found is not None and found["type"] == resource["type"] and found["id"] == resource["id"]
    assert len(index) == len({(r["type"], r["id"]) for r in included})
    relationship = {"data": [{"type": r["type"], "id": r["id"]} for r in included]}
    assert len(index.resolve_many(relationship)) == len(included)
    assert page.next_link == "/x?page=2"


rules_strategy = st.builds(
    FieldRules,
    data_type=st.sampled_from(DATA_TYPES),
    options=st.lists(st.text(min_size=1, max_size=6), max_size=4).map(tuple),
    required=st.booleans(),
    pattern=st.none() | st.sampled_from([r"[A-Z]+", r"PO-\d+", r"(", r".*"]),
    max_length=st.none() | st.integers(min_value=0, max_value=10),
    default_format=st.none() | st.sampled_from(["MM/DD/YYYY", "DD.MM.YYYY", "%Y-%m-%d", "0.00", "YYYY"]),
)


@pytest.mark.slow
@given(json_values, rules_strategy)
@settings(max_examples=300)
def test_check_value_returns_text_or_a_reason(value: Any, rules: FieldRules) -> None:
    try:
        shown = check_value(value, rules)
    except ValueProblem as problem:
        assert str(problem)
    else:
        assert isinstance(shown, str)


@given(st.text(max_size=30), rules_strategy)
@settings(max_examples=300)
def test_cells_become_values_that_pass_their_own_check(text: str, rules: FieldRules) -> None:
    try:
        value = cell_value(text, rules)
    except ValueProblem as problem:
        assert str(problem)
        return
    # Whatever a cell turns into is a value the same rules accept: nothing is sent that the
    # service would refuse for a reason the file could have shown.
    assert isinstance(check_value(value, rules), str)
