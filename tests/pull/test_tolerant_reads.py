"""Pulls and a bulk plan's reads are reads too: whatever shape the service's answers take, a pull
into the warehouse completes and keeps every resource it was given, and a plan never crashes on
what it read (issue 12, tolerance). The client's own property is in test_tolerance.py; here the
same rewrites reach `pull_all` and `apply_file`, which normalize, load and plan from them.

The pulls build their clients from settings; the tests route those clients to the sandbox app in
process (with the answers rewritten on the way) instead of a port.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shipsync.api import AsyncShipsyncClient, ClientOptions
from shipsync.bulk.apply import apply_file
from shipsync.config import Settings, load_settings
from shipsync.errors import ApiNetworkError, InputError
from shipsync.pull.documents import pull_documents
from shipsync.pull.everything import pull_all
from shipsync.pull.reference import pull_metro_areas
from shipsync_sandbox import SandboxApp, SandboxOptions, create_app
from support.lake import fetch
from support.mutations import MUTATIONS, Mutator
from support.sandbox_transport import IN_PROCESS_URL, Rewrite, SandboxTransport
from support.sandboxes import K1

_FROM_OPTIONS = AsyncShipsyncClient.from_options.__func__  # type: ignore[attr-defined]


@contextmanager
def answers_rewritten(app: SandboxApp, rewrite: Rewrite) -> Iterator[SandboxTransport]:
    """Every client a pull builds talks to `app`, its answers passed through `rewrite`."""
    transport = SandboxTransport(app, rewrite)

    def from_options(cls: type[AsyncShipsyncClient], options: ClientOptions, **kwargs: Any) -> AsyncShipsyncClient:
        return _FROM_OPTIONS(cls, options, **{**kwargs, "http_transport": transport})  # type: ignore[no-any-return]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(AsyncShipsyncClient, "from_options", classmethod(from_options))
        yield transport


def in_process(warehouse: Path) -> Settings:
    return load_settings(api_url=IN_PROCESS_URL, api_key=K1, warehouse=warehouse, rate_limit="0", retry_base_delay=0.01)


def test_a_metro_area_answered_without_its_code_is_kept_under_the_code_asked(tmp_path: Path) -> None:
    app = create_app(SandboxOptions(api_keys=(K1,), documents=1, rate_limit=None))

    def no_code(request: httpx.Request, body: Any) -> Any:
        attributes = body["data"]["attributes"]
        if attributes["code"] == "USLAX":
            attributes["code"] = None
        elif attributes["code"] == "NLRTM":
            del attributes["code"]
        return body

    warehouse = tmp_path / "w"
    with answers_rewritten(app, no_code):
        record = pull_metro_areas(in_process(warehouse), ids=["USLAX", "NLRTM", "DEHAM"])
    assert not record.errors
    assert fetch(warehouse, "SELECT code, name FROM metro_areas ORDER BY code") == [
        ("DEHAM", "Hamburg"),
        ("NLRTM", "Rotterdam"),
        ("USLAX", "Los Angeles"),
    ]


@pytest.mark.slow
def test_an_unreadable_timestamp_is_left_empty_and_the_rest_loads(tmp_path: Path) -> None:
    app = create_app(SandboxOptions(api_keys=(K1,), documents=3, rate_limit=None))

    def odd_times(request: httpx.Request, body: Any) -> Any:
        data = body.get("data")
        for resource in data if isinstance(data, list) else [data]:
            if isinstance(resource, dict) and resource.get("type") in ("document", "tracking_request"):
                resource["attributes"]["updated_at"] = "sometime last week"
        return body

    warehouse = tmp_path / "w"
    with answers_rewritten(app, odd_times):
        records = pull_all(in_process(warehouse), force=True)
    assert not [e for r in records for e in r.errors]
    account = app.state.world.accounts[K1]
    assert fetch(warehouse, "SELECT count(*), count(updated_at), count(created_at) FROM documents") == [(3, 0, 3)]
    assert fetch(warehouse, "SELECT count(*), count(updated_at) FROM tracking_requests") == [(len(account.tracking_requests), 0)]


@pytest.mark.slow
def test_a_definition_listed_without_its_slug_does_not_stop_a_plan(tmp_path: Path) -> None:
    app = create_app(SandboxOptions(api_keys=(K1,), documents=2, rate_limit=None))

    def slugless(request: httpx.Request, body: Any) -> Any:
        if request.url.path.endswith("/custom_field_definitions"):
            for resource in body["data"]:
                if resource["attributes"]["api_slug"] == "consignee":
                    resource["attributes"]["api_slug"] = None
        return body

    account = app.state.world.accounts[K1]
    number = account.of_type("container")[0]["attributes"]["number"]
    sheet = tmp_path / "values.csv"
    sheet.write_text(f"container_number,po_number\n{number},PO-77\n", encoding="utf-8")
    with answers_rewritten(app, slugless):
        settings_ = in_process(tmp_path / "w")
        pull_documents(settings_, all_documents=True)  # the containers, by number
        odd = tmp_path / "odd.csv"
        odd.write_text(f"container_number,colour\n{number},red\n", encoding="utf-8")
        with pytest.raises(InputError, match=r"colour name no custom field definition \(\d+ are defined"):
            apply_file(settings_, "custom-fields", odd)
        report = apply_file(settings_, "custom-fields", sheet)
    assert report.counts["applied"] == 1 and not report.problems
    assert [cf["attributes"]["value"] for cf in account.custom_fields.values()] == ["PO-77"]


answers = st.tuples(st.integers(0, 2**32 - 1), st.floats(0.05, 0.5), st.lists(st.sampled_from(MUTATIONS), min_size=1, unique=True))


@pytest.mark.slow
@settings(max_examples=5)
@given(answers=answers)
def test_no_pull_fails_whatever_the_answers_look_like(answers: tuple[int, float, list[str]], tmp_path_factory: Any) -> None:
    seed, rate, kinds = answers
    app = create_app(SandboxOptions(api_keys=(K1,), documents=4, rate_limit=None))
    warehouse = tmp_path_factory.mktemp("w") / "w"
    with answers_rewritten(app, Mutator(random.Random(seed), rate, tuple(kinds))):
        pull_all(in_process(warehouse), force=True)
    account = app.state.world.accounts[K1]
    assert {r[0] for r in fetch(warehouse, "SELECT id FROM documents")} == set(account.documents)
    assert {r[0] for r in fetch(warehouse, "SELECT id FROM tracking_requests")} == set(account.tracking_requests)


BIG = 123456789012345678901234


@pytest.mark.parametrize("odd", ["an integer beyond 64 bits", "NaN"])
def test_a_listing_page_is_read_as_python_reads_it(tmp_path: Path, odd: str) -> None:
    """An integer beyond 64 bits (too big for its column) is kept in the leftovers as sent, never
    rounded to a float; NaN, which strict JSON readers refuse, does not stop the page."""
    app = create_app(SandboxOptions(api_keys=(K1,), documents=3, rate_limit=None))

    def odd_numbers(request: httpx.Request, body: Any) -> Any:
        if request.url.path.endswith("/documents"):
            if odd == "NaN":
                body["data"][0]["attributes"]["file_size_bytes"] = float("nan")  # json.dumps writes NaN
            else:
                body["data"][0]["attributes"]["file_size_bytes"] = BIG
        return body

    warehouse = tmp_path / "w"
    with answers_rewritten(app, odd_numbers):
        record = pull_documents(in_process(warehouse), all_documents=True)
    assert record.status == "completed" and not record.errors
    assert fetch(warehouse, "SELECT count(*) FROM documents") == [(3,)]
    if odd != "NaN":
        kept = fetch(warehouse, "SELECT file_size_bytes, leftovers FROM documents WHERE leftovers LIKE '%file_size_bytes%'")
        assert len(kept) == 1 and kept[0][0] is None
        assert f'"file_size_bytes":{BIG}' in kept[0][1]


def test_a_listing_page_that_is_not_readable_json_fails_the_run_with_one_line(tmp_path: Path) -> None:
    app = create_app(SandboxOptions(api_keys=(K1,), documents=3, rate_limit=None))

    def not_utf8(request: httpx.Request, body: Any) -> Any:
        if request.url.path.endswith("/documents"):
            return json.dumps(body).encode().replace(b'"included": [', b'"included": [{"id": "u1", "type": "user", "name": "\xff"}, ', 1)
        return body

    warehouse = tmp_path / "w"
    with answers_rewritten(app, not_utf8), pytest.raises(ApiNetworkError) as caught:
        pull_documents(in_process(warehouse), all_documents=True)
    message = str(caught.value)
    assert message.startswith("GET /documents") and "unreadable JSON body (status 200)" in message and "\n" not in message
    assert fetch(warehouse, "SELECT count(*) FROM documents") == [(0,)]
    assert fetch(warehouse, "SELECT status FROM sync_runs WHERE flow = 'pull_documents'") == [("failed",)]
