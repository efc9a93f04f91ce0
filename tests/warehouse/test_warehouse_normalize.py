"""Unit tests of `warehouse.normalize` and `warehouse.declared_rows`: resources as the service may
send them (members null, absent, of the wrong shape, unknown) become columns without failing."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import orjson
from hypothesis import given
from hypothesis import strategies as st

from shipsync.api.account_models import CustomField, TrackingRequest, Webhook
from shipsync.api.tracking_models import Container
from shipsync.warehouse.coerce import utc_timestamp
from shipsync.warehouse.declared_rows import declared_row, declared_tables_batch
from shipsync.warehouse.members import members_of
from shipsync.warehouse.normalize import merge, webhook_columns

OBSERVED = "2026-11-25T12:00:00+00:00"


def test_tracking_requests_take_tags_from_either_member_and_survive_null_parts() -> None:
    batch = declared_tables_batch(
        TrackingRequest,
        [
            {"id": 1, "attributes": {"tags": ["a", "b"], "shipment_tags": ["other"]}},
            {"id": "2", "attributes": {"shipment_tags": ["c"]}, "relationships": {"tracked_object": {"data": None}}},
            {"id": "3", "attributes": None, "relationships": None},
        ],
        observed_at=OBSERVED,
    )["tracking_requests"]
    assert batch["id"] == ["1", "2", "3"]
    assert batch["tags"] == [["a", "b"], ["c"], None]
    assert batch["tracked_object_id"] == [None, None, None] and batch["tracked_object_type"] == [None, None, None]
    # `tags` came under both names in the first: the other one is kept, not dropped.
    leftovers = [orjson.loads(left) if left else None for left in batch["leftovers"]]
    assert leftovers == [{"attributes": {"shipment_tags": ["other"]}}, None, None]
    assert batch["observed_at"] == [OBSERVED] * 3


def test_custom_fields_keep_the_value_as_json_and_the_entity_it_belongs_to() -> None:
    (columns,) = declared_tables_batch(
        CustomField,
        [
            {
                "id": "cf-1",
                "attributes": {"api_slug": "po_number", "value": ["PO-1", "PO-2"], "display_value": "PO-1, PO-2"},
                "relationships": {"entity": {"data": {"type": "container", "id": "c-1"}}, "definition": {"data": {"id": "d-1"}}},
            }
        ],
        observed_at=OBSERVED,
    ).values()
    assert orjson.loads(columns["value"][0]) == ["PO-1", "PO-2"]
    assert (columns["entity_type"], columns["entity_id"], columns["definition_id"]) == (["container"], ["c-1"], ["d-1"])


def test_a_webhooks_header_values_and_secret_never_become_columns() -> None:
    resource = {
        "id": "w-1",
        "attributes": {"url": "https://x", "secret": "s3cret-value", "headers": [{"name": "Authorization", "value": "Token k"}]},
    }
    # Credentials wherever an answer might carry them: none of it is kept, in a column or in leftovers.
    odd = {
        "id": "w-2",
        "attributes": {"secret": "other-s3cret", "headers": {"Authorization": "Token k"}, "config": {"signing_secret": "nested-s3cret"}},
        "relationships": {"owner": {"data": None, "meta": {"secret": "meta-s3cret"}}},
        "links": {"self": "/v2/webhooks/w-2", "rotate": "/v2/webhooks/w-2?secret=link-s3cret"},
        "meta": {"secret": "top-s3cret"},
    }
    names = {"id": "w-3", "attributes": {"headers": [{"name": {"x": "Token k"}, "value": "Token k"}, "Token k", {"name": "X-Env"}]}}
    columns = webhook_columns([resource, odd, names], observed_at=OBSERVED)["webhooks"]
    assert "secret" not in columns
    assert "s3cret" not in repr(columns) and "Token k" not in repr(columns)
    assert [orjson.loads(h) for h in columns["headers"]] == [[{"name": "Authorization"}], [], [{"name": "X-Env"}]]
    assert columns["leftovers"] == [None, None, None] and columns["self_link"] == [None, "/v2/webhooks/w-2", None]


def test_a_struct_holding_a_secret_that_does_not_fit_is_not_kept() -> None:
    """The declaration alone (without `webhook_columns`' cut): a header list of the wrong shape is dropped, not left over."""
    row = declared_row(Webhook, {"id": "w", "type": "webhook", "attributes": {"headers": [{"name": 1, "value": "TOKEN"}], "url": "u"}})
    assert row["headers"] is None and row["url"] == "u" and row["leftovers"] is None


def test_tags_sent_of_the_wrong_type_fall_back_to_shipment_tags() -> None:
    (columns,) = declared_tables_batch(
        TrackingRequest,
        [
            {"id": "1", "attributes": {"tags": "hot", "shipment_tags": ["hot"]}},
            {"id": "2", "attributes": {"tags": None, "shipment_tags": "x"}},
        ],
        observed_at=OBSERVED,
    ).values()
    assert columns["tags"] == [["hot"], None]
    assert [orjson.loads(left) for left in columns["leftovers"]] == [
        {"attributes": {"tags": "hot"}},
        {"attributes": {"shipment_tags": "x"}},
    ]


def test_merge_appends_batches_table_by_table() -> None:
    into: dict[str, dict[str, list[Any]]] = {"t": {"id": ["1"], "x": [1]}}
    merge(into, {"t": {"id": ["2"], "x": [2]}, "u": {"id": ["9"]}})
    assert into == {"t": {"id": ["1", "2"], "x": [1, 2]}, "u": {"id": ["9"]}}


def column_of(name: str) -> str:
    return next(m.column for m in members_of(Container) if m.name == name)


def test_a_declared_row_keeps_misfits_and_unknown_members_in_leftovers() -> None:
    row = declared_row(
        Container,
        {
            "id": "c-1",
            "type": "container",
            "attributes": {"number": "MSCU1234565", "weight_in_lbs": "heavy", "brand_new_member": {"x": 1}},
            "relationships": {"shipment": {"data": {"type": "shipment", "id": "s-1"}}, "new_link": {"data": None}},
            "links": {"self": "/v2/containers/c-1"},
        },
    )
    assert row["id"] == "c-1" and row[column_of("number")] == "MSCU1234565"
    assert row[column_of("weight_in_lbs")] is None  # a misfit is not a value...
    leftovers = orjson.loads(row["leftovers"])
    assert leftovers["attributes"] == {"weight_in_lbs": "heavy", "brand_new_member": {"x": 1}}  # ...and is not lost
    assert leftovers["relationships"] == {"new_link": {"data": None}}
    assert row[column_of("shipment")] == "s-1" and row["self_link"] == "/v2/containers/c-1"


def test_a_declared_row_of_a_bare_resource_is_all_empty_and_has_no_leftovers() -> None:
    for bare in ({"id": "c-2", "type": "container"}, {"id": "c-2", "type": "container", "attributes": None, "relationships": None}):
        row = declared_row(Container, bare)
        assert row["leftovers"] is None and row["self_link"] is None
        assert all(row[m.column] is None for m in members_of(Container))


def test_members_of_the_wrong_shape_are_kept_whole() -> None:
    row = declared_row(Container, {"id": "c-3", "type": "container", "attributes": ["not", "an", "object"]})
    assert orjson.loads(row["leftovers"]) == {"attributes": ["not", "an", "object"]}


@given(
    st.datetimes(datetime(1000, 1, 1), datetime(9998, 12, 1), timezones=st.just(UTC)).map(lambda moment: moment.replace(microsecond=0)),
    st.sampled_from(["T", " "]),
)
def test_the_services_utc_form_is_rewritten_as_any_other_time_is(moment: datetime, separator: str) -> None:
    sent = moment.strftime(f"%Y-%m-%d{separator}%H:%M:%SZ")
    assert utc_timestamp(sent) == datetime.fromisoformat(sent).astimezone(UTC).isoformat()
    week_date = moment.strftime(f"%G-W%V-%u{separator}%H:%M:%SZ")  # also 20 characters, read the same way
    assert utc_timestamp(week_date) == datetime.fromisoformat(week_date).astimezone(UTC).isoformat()
