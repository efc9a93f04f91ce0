"""The sandbox answers as the service does (issue 12, items 8 and 10; issue 19, item 12): listing
filters and sorts, paging meta, links, webhook listings and events, 422s for malformed bodies,
admin routes keyed by account, and checked simulation inputs."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support.http import HTTP
from support.hypothesis_profile import suppressing
from support.sandboxes import K1, K2, RunningSandbox

AUTH = {"Authorization": f"Token {K1}"}


def get(sandbox: RunningSandbox, path: str, **params: Any) -> Any:
    response = HTTP.get(f"{sandbox.api_url}/{path}", params=params, headers=AUTH)
    assert response.status_code == 200, response.text
    return response.json()


def ids(body: Any) -> list[str]:
    return [r["id"] for r in body["data"]]


def test_document_listing_sorts_by_added_by_and_filters_by_reference(sandbox: RunningSandbox) -> None:
    account = sandbox.state.world.accounts[K1]
    names = {u["id"]: u["attributes"]["first_name"] for u in account.of_type("user")}
    ordered = get(sandbox, "documents", sort="added_by", **{"page[size]": 100})["data"]
    added_by = [names[d["relationships"]["user"]["data"]["id"]] for d in ordered]
    assert added_by == sorted(added_by) and len(set(added_by)) == 3
    assert ids(get(sandbox, "documents", sort="-added_by", **{"page[size]": 100}))[0] == ordered[-1]["id"]
    document = next(iter(account.documents.values()))
    shipment = account.resource("shipment", document["relationships"]["shipments"]["data"][0]["id"])
    assert shipment is not None
    bill = shipment["attributes"]["bill_of_lading_number"]
    linked = {d["id"] for d in account.documents.values() if shipment["id"] in {s["id"] for s in d["relationships"]["shipments"]["data"]}}
    assert set(ids(get(sandbox, "documents", **{"filter[reference]": bill.lower()}))) == linked
    assert get(sandbox, "documents", **{"filter[reference]": "NO-SUCH-REFERENCE"})["data"] == []


def test_tracking_requests_q_searches_numbers_and_instants_compare_as_times(sandbox: RunningSandbox) -> None:
    requests = get(sandbox, "tracking_requests", **{"page[size]": 100})["data"]
    number = requests[0]["attributes"]["request_number"]
    assert number in [r["attributes"]["request_number"] for r in get(sandbox, "tracking_requests", q=number[-6:])["data"]]
    assert get(sandbox, "tracking_requests", q="NOTHING-LIKE-THIS")["data"] == []
    pivot = sorted(r["attributes"]["updated_at"] for r in requests)[len(requests) // 2]  # e.g. 2026-01-09T05:00:00Z
    utc = get(sandbox, "tracking_requests", **{"filter[updated_at][start]": pivot, "page[size]": 100})
    # The same instant written with another offset (as text it sorts differently): the same answer.
    same_instant = datetime.fromisoformat(pivot.replace("Z", "+00:00")).astimezone(timezone(timedelta(hours=-5))).isoformat()
    assert ids(get(sandbox, "tracking_requests", **{"filter[updated_at][start]": same_instant, "page[size]": 100})) == ids(utc)
    assert 0 < len(utc["data"]) < len(requests)


def test_definition_display_name_filter_is_a_prefix(sandbox: RunningSandbox) -> None:
    names = [d["attributes"]["display_name"] for d in get(sandbox, "custom_field_definitions", **{"filter[display_name]": "prio"})["data"]]
    assert names == ["Priority"]  # not "Shipment Priority", which only contains it


def test_paging_meta_links_and_webhook_listings(sandbox: RunningSandbox) -> None:
    body = get(sandbox, "documents", **{"page[size]": 7})
    assert body["meta"] == {"size": 7, "total": 30} and set(body["links"]) >= {"self", "first", "next", "last"}
    schema = get(sandbox, "document_schemas/commercial_invoice@2026-03-23")
    assert schema["data"]["links"]["self"].endswith("/v2/document_schemas/commercial_invoice@2026-03-23")
    created = HTTP.post(
        f"{sandbox.api_url}/webhooks",
        headers=AUTH,
        json={"data": {"type": "webhook", "attributes": {"url": "https://x.test/h", "events": ["container.created"], "active": True}}},
    ).json()["data"]
    listed = get(sandbox, "webhooks")["data"]
    assert [w["attributes"]["secret"] for w in listed] == [created["attributes"]["secret"]]
    for method, path in (("POST", "webhooks"), ("PATCH", f"webhooks/{created['id']}")):
        body = {"data": {"type": "webhook", "attributes": {"url": "https://x.test/h", "events": []}}}
        refused = HTTP.request(method, f"{sandbox.api_url}/{path}", headers=AUTH, json=body)
        assert refused.status_code == 422 and refused.json()["errors"][0]["source"]["pointer"] == "/data/attributes/events"


MALFORMED = [
    ("PATCH", "tracking_requests/{tr}", {"data": {"type": "tracking_request", "attributes": {}, "relationships": [{"customer": 1}]}}),
    (
        "POST",
        "custom_fields",
        {"data": {"type": "custom_field", "attributes": {"api_slug": "priority", "value": "x"}, "relationships": []}},
    ),
    ("POST", "custom_fields", {"data": {"type": "custom_field", "attributes": {"api_slug": "priority"}, "relationships": {"entity": []}}}),
    (
        "POST",
        "custom_fields",
        {
            "data": {
                "type": "custom_field",
                "attributes": {"api_slug": "priority", "value": "x"},
                "relationships": {"entity": {"data": [{"type": "container", "id": "c"}]}},
            }
        },
    ),
    ("POST", "webhooks", {"data": [{"type": "webhook"}]}),
    ("POST", "custom_field_definitions", {"data": {"type": "custom_field_definition", "attributes": [1, 2]}}),
    ("PATCH", "shipments/{shipment}", {"data": {"type": "shipment", "id": 7, "attributes": {"tags": ["a"]}}}),
]


@pytest.mark.parametrize(("method", "path", "body"), MALFORMED)
def test_malformed_bodies_are_422_with_a_pointer(sandbox: RunningSandbox, method: str, path: str, body: Any) -> None:
    account = sandbox.state.world.accounts[K1]
    tr = next(iter(account.tracking_requests))
    shipment = account.of_type("shipment")[0]["id"]
    response = HTTP.request(method, f"{sandbox.api_url}/{path.format(tr=tr, shipment=shipment)}", headers=AUTH, json=body)
    assert response.status_code == 422, response.text
    assert response.json()["errors"][0]["source"]["pointer"].startswith("/data")


MEMBER_NAMES = ["data", "type", "id", "attributes", "relationships", "entity", "value", "api_slug", "tags", "events", "url"]
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(MEMBER_NAMES), inner, max_size=4),
    max_leaves=12,
)
WRITE_PATHS = ["tracking_requests/{tr}", "shipments/{shipment}", "custom_fields", "custom_field_definitions", "webhooks"]


@settings(max_examples=60, suppress_health_check=suppressing(HealthCheck.function_scoped_fixture))
@given(body=json_values, path=st.sampled_from(WRITE_PATHS), method=st.sampled_from(["POST", "PATCH"]))
def test_no_body_makes_the_sandbox_fail(sandbox: RunningSandbox, body: Any, path: str, method: str) -> None:
    account = sandbox.state.world.accounts[K1]
    target = path.format(tr=next(iter(account.tracking_requests)), shipment=account.of_type("shipment")[0]["id"])
    response = HTTP.request(method, f"{sandbox.api_url}/{target}", headers=AUTH, content=json.dumps(body))
    assert response.status_code < 500, response.text


def test_admin_routes_are_keyed_and_show_one_account(sandbox: RunningSandbox) -> None:
    base = sandbox.server.url
    assert HTTP.get(f"{base}/_admin/health").status_code == 200
    for path in ("stats", "deliveries"):
        assert HTTP.get(f"{base}/_admin/{path}").status_code == 401
        assert HTTP.get(f"{base}/_admin/{path}", headers={"Authorization": "Token nobody"}).status_code == 401
    assert HTTP.post(f"{base}/_admin/simulate").status_code == 401
    for _ in range(3):
        HTTP.get(f"{sandbox.api_url}/documents", headers={"Authorization": f"Token {K2}"})
    HTTP.get(f"{sandbox.api_url}/documents", headers=AUTH)
    mine = HTTP.get(f"{base}/_admin/stats", headers=AUTH).json()
    theirs = HTTP.get(f"{base}/_admin/stats", headers={"Authorization": f"Token {K2}"}).json()
    assert (mine["admitted"], mine["status_counts"]) == (1, {"200": 1})
    assert theirs["admitted"] == 3


@pytest.mark.parametrize(
    "params", [{"containers": "-1"}, {"containers": "0"}, {"containers": "x"}, {"containers": "1000000"}, {"seed": "-5"}]
)
def test_simulate_checks_its_inputs(sandbox: RunningSandbox, params: dict[str, str]) -> None:
    response = HTTP.post(f"{sandbox.server.url}/_admin/simulate", params=params, headers=AUTH)
    assert response.status_code == 400 and response.json()["errors"][0]["source"]["parameter"] in params


def test_tracking_requests_are_listed_newest_first_and_an_unknown_status_matches_nothing(sandbox: RunningSandbox) -> None:
    listed = get(sandbox, "tracking_requests", **{"page[size]": 100})["data"]
    created = [r["attributes"]["created_at"] for r in listed]
    assert created == sorted(created, reverse=True) and len(set(created)) > 1  # the reference: newest first
    # The listing declares no refusal: a status it does not know matches no request.
    assert get(sandbox, "tracking_requests", **{"filter[status]": "exploded"})["data"] == []
    assert all("ref_number" not in r["attributes"] for r in listed)  # answers carry `ref_numbers` only
