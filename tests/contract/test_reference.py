"""The vendored reference and the one list of its contradictions and silences
(`tests/contract/reference`), and the checks that read them (`support/contract_schemas.py`,
`support/contract_checks.py`): the document is the published one; each reading points at what the
document says and applies; every example the document gives follows its schema unless a reading
names it; docs/sandbox.md shows the list as it is; and the checks refuse what the reference
refuses (a status or content type it does not declare, a parameter it does not declare, null where
it is not nullable).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shipsync_sandbox.exchange_log import Exchange
from support.contract_checks import Definitions, answer_problems, request_problems, value_type_problems
from support.contract_schemas import DOCUMENT, READINGS, REFERENCE, Reference, as_json_schema, copied_document, readings_table, resolve

ROOT = Path(__file__).parents[2]
DOCS = ROOT / "docs" / "sandbox.md"
TABLE_START, TABLE_END = "<!-- readings: start -->", "<!-- readings: end -->"


def test_the_document_is_the_one_published_at_the_commit_its_readme_names() -> None:
    readme = (DOCUMENT.parent / "README.md").read_text(encoding="utf-8")
    named = re.search(r"sha256 `([0-9a-f]{64})`", readme)
    assert named, "the README names the file's sha256"
    assert hashlib.sha256(DOCUMENT.read_bytes()).hexdigest() == named.group(1)
    assert "Terminal49/API" in readme and "docs/openapi.json" in readme and "8796ede" in readme


def test_each_reading_points_at_the_document_and_applies() -> None:
    published = copied_document()
    ids = [r.id for r in REFERENCE.readings]
    assert len(ids) == len(set(ids)) and len(ids) <= 20  # one short list
    for reading in REFERENCE.readings:
        assert reading.kind in ("contradiction", "silence"), reading.id
        assert reading.document_says and reading.sandbox_follows, reading.id
        for pointer in [*reading.pointers, *reading.examples]:
            resolve(published, pointer)  # raises where a pointer names nothing
        if reading.responses and not reading.every_operation:
            assert all(p.endswith("/responses") for p in reading.pointers), reading.id
        assert reading.kind == "silence" or not reading.responses, reading.id


def _examples(document: dict[str, Any]) -> Iterator[tuple[str, str, Any]]:
    """(schema pointer, example pointer, example) of every example the document gives."""

    def escape(part: str) -> str:
        return part.replace("~", "~0").replace("/", "~1")

    for template, item in document["paths"].items():
        for method, operation in item.items():
            if not isinstance(operation, dict) or method == "parameters":
                continue
            at = f"/paths/{escape(template)}/{method}"
            places = [
                (f"{at}/responses/{s}/content/{escape(m)}", c)
                for s, r in operation.get("responses", {}).items()
                for m, c in r.get("content", {}).items()
            ]
            places += [(f"{at}/requestBody/content/{escape(m)}", c) for m, c in operation.get("requestBody", {}).get("content", {}).items()]
            for base, content in places:
                if "schema" in content and "example" in content:
                    yield f"{base}/schema", f"{base}/example", content["example"]
                for name, example in (content.get("examples") or {}).items() if "schema" in content else ():
                    yield f"{base}/schema", f"{base}/examples/{escape(name)}/value", example.get("value")
    for name, schema in document["components"]["schemas"].items():
        for label, example in (schema.get("x-examples") or {}).items():
            yield f"/components/schemas/{escape(name)}", f"/components/schemas/{escape(name)}/x-examples/{escape(label)}", example


def test_every_example_follows_its_schema_unless_a_reading_names_it() -> None:
    named = {pointer for reading in REFERENCE.readings for pointer in reading.examples}
    unnamed, checked = [], 0
    for schema, at, example in _examples(REFERENCE.document):
        checked += 1
        for error in REFERENCE.validator(schema).iter_errors(example):
            while error.validator in ("anyOf", "oneOf") and error.context:
                error = max(error.context, key=lambda e: (len(e.absolute_path), e.validator != "enum"))
            where = "/".join([at, *map(str, error.absolute_path)])
            if where not in named:
                unnamed.append(f"{where}: {error.message[:120]}")
    assert checked > 40
    assert not unnamed, "\n".join(unnamed)
    examples_broken = {"/".join(p.split("/")[:-1]) for p in named}
    assert examples_broken  # the list names examples: the test above can see them


def test_without_the_readings_the_sandbox_would_break_the_document() -> None:
    """Each contradiction's patch is needed: without it the document's own examples (or the
    sandbox's shapes the reading describes) do not pass."""
    bare = Reference([])
    container = {"id": "6f0b1e7a-6d2f-4f65-9b5c-2f7d3f0e1a11", "type": "container", "attributes": {}}
    assert bare.resource_problems(container) and not REFERENCE.resource_problems(container)
    linked = {"id": "6f0b1e7a-6d2f-4f65-9b5c-2f7d3f0e1a11", "type": "shipment", "attributes": {"bill_of_lading_number": "X"}}
    linked |= {"relationships": {"destination_terminal": {"data": None}}, "links": {"self": "https://x/v2/shipments/1"}}
    assert bare.resource_problems(linked) and not REFERENCE.resource_problems(linked)


def test_docs_show_the_readings_as_they_are() -> None:
    text = DOCS.read_text(encoding="utf-8")
    assert TABLE_START in text and TABLE_END in text, f"{DOCS} keeps the table between {TABLE_START} and {TABLE_END}"
    shown = text.split(TABLE_START, 1)[1].split(TABLE_END, 1)[0].strip()
    assert shown == readings_table(REFERENCE.readings), "docs/sandbox.md's table is out of date; it should read:\n" + readings_table(
        REFERENCE.readings
    )
    assert json.loads(READINGS.read_text())["readings"]


def test_nullable_reads_as_null_allowed() -> None:
    assert as_json_schema({"type": "string", "nullable": True}) == {"type": ["string", "null"]}
    assert as_json_schema({"type": "integer", "enum": [1, 2], "nullable": True}) == {"type": ["integer", "null"], "enum": [1, 2, None]}
    assert as_json_schema({"$ref": "#/x", "nullable": True}) == {"anyOf": [{"type": "null"}, {"$ref": "#/x"}]}
    assert as_json_schema({"type": "string"}) == {"type": "string"}


def _exchange(
    method: str,
    path: str,
    status: int = 200,
    body: Any = None,
    *,
    query: str = "",
    response_type: str | None = "application/json",
    sent: Any = None,
) -> Exchange:
    content = json.dumps(body).encode() if body is not None else b""
    request = json.dumps(sent).encode() if sent is not None else b""
    return Exchange(method, f"/v2{path}", query, "application/json" if sent is not None else None, request, status, response_type, content)


LINE = {"id": "6f0b1e7a-6d2f-4f65-9b5c-2f7d3f0e1a11", "type": "shipping_line"}
LINE |= {"attributes": {"scac": "MAEU", "name": "Maersk", "alternative_scacs": [], "short_name": "Maersk"}}
LINE["attributes"] |= {
    "bill_of_lading_tracking_support": True,
    "booking_number_tracking_support": True,
    "container_number_tracking_support": True,
}


@pytest.mark.parametrize(
    ("exchange", "wanted"),
    [
        (_exchange("GET", "/shipping_lines", body={"data": [LINE]}), None),
        (_exchange("GET", "/shipping_lines", body={"data": [LINE]}, response_type="application/vnd.api+json"), "content type"),
        (_exchange("DELETE", "/shipments/s1/custom_fields/po", status=200), "status 200 is not one"),
        (_exchange("DELETE", "/shipments/s1/custom_fields/po", status=204), None),
        (_exchange("DELETE", "/webhooks/w1", status=200, body={"data": None}), "a body"),
        (_exchange("GET", "/metro_areas/USLAX", status=403, body={"errors": [{"title": "No"}]}), "status 403"),
        (
            _exchange("GET", "/shipping_lines", body={"data": [{**LINE, "attributes": {**LINE["attributes"], "scac": None}}]}),
            "None is not of type",
        ),
    ],
)
def test_the_answer_check_refuses_what_the_reference_does_not_declare(exchange: Exchange, wanted: str | None) -> None:
    problems = answer_problems(exchange)
    assert (not problems) if wanted is None else any(wanted in p for p in problems), problems


@pytest.mark.parametrize(
    ("exchange", "wanted"),
    [
        (_exchange("GET", "/shipping_lines", query="page%5Bsize%5D=100"), "page[size] is not a parameter"),
        (_exchange("GET", "/shipments", query="page%5Bsize%5D=100&include=containers"), None),
        (_exchange("GET", "/shipments", query="page%5Bsize%5D=lots"), "not an integer"),
        (_exchange("GET", "/tracking_requests", query="filter%5Bupdated_at%5D%5Bstart%5D=2026-05-11T18%3A30%3A00"), "date-time"),
        (_exchange("PATCH", "/shipments/s1", sent={"data": {"attributes": {"tags": ["a", "a"]}}}), "non-unique"),
        (
            _exchange(
                "POST",
                "/webhooks",
                sent={"data": {"type": "webhook", "attributes": {"url": "https://x/h", "events": ["container.created"]}}},
            ),
            "'active' is a required property",
        ),
        (_exchange("PATCH", "/shipments/s1/stop_tracking", sent={"data": {}}), "takes no body"),
    ],
)
def test_the_request_check_refuses_what_the_reference_does_not_take(exchange: Exchange, wanted: str | None) -> None:
    problems = request_problems(exchange)
    assert (not problems) if wanted is None else any(wanted in p for p in problems), problems


def test_custom_field_values_are_held_to_their_definitions_types() -> None:
    definitions = Definitions()
    made = [("inspected", "boolean"), ("gate_at", "datetime"), ("pallets", "number"), ("flags", "enum_multi")]
    definitions.learn(
        _exchange(
            "POST",
            "/custom_field_definitions",
            201,
            {"data": {"id": f"d{n}", "type": "custom_field_definition", "attributes": {"api_slug": s, "data_type": t}}},
        )
        for n, (s, t) in enumerate(made)
    )

    def sent(slug: str, value: Any) -> list[str]:
        return value_type_problems(
            _exchange("POST", "/custom_fields", sent={"data": {"attributes": {"api_slug": slug, "value": value}}}), definitions
        )

    assert sent("inspected", "false") and not sent("inspected", False)
    assert sent("gate_at", "2026-05-11T18:30:00") and not sent("gate_at", "2026-05-11T18:30:00Z")
    assert sent("pallets", "12") and not sent("pallets", 12) and not sent("pallets", None)
    assert sent("flags", "a; b") and not sent("flags", ["a", "b"])
    default = {"data": {"attributes": {"api_slug": "x", "data_type": "boolean", "default_value": "false"}}}
    assert value_type_problems(_exchange("POST", "/custom_field_definitions", sent=default), definitions)
