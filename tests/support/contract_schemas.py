"""The service's reference as the contract tests read it (`tests/contract/reference/openapi.json`):
its operations, and what each one's requests and answers may be, as JSON Schemas.

The document is OpenAPI 3.0. Reading it: a `$ref` resolves into `components`; `nullable: true`
allows null; a `format` the document names (`date-time`, `date`, `uuid`, `uri`, `ipv4`) is
checked. An operation's answer is valid when the operation declares its status and its content
type and the body follows that content's schema; a request is valid when each query parameter is
one the operation declares, with a value its schema takes, and its body follows the operation's
`requestBody`.

The only tolerance is `contradictions.json` beside the document: the places where the document
contradicts itself or is silent, each with its JSON pointer, what the document says and the reading
the sandbox follows. Its `patch` and `responses` are applied to the document before anything is read
(`REFERENCE`); `readings_table` renders the list for docs/sandbox.md.
"""

from __future__ import annotations

import copy
import ipaddress
import json
import re
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from functools import cached_property
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from jsonschema import Draft202012Validator, FormatChecker
from referencing import Registry, Resource

FOLDER = Path(__file__).parents[1] / "contract" / "reference"
DOCUMENT = FOLDER / "openapi.json"
READINGS = FOLDER / "contradictions.json"
URI = "https://shipsync.test/reference/openapi.json"
METHODS = ("get", "post", "put", "patch", "delete")
ERRORS_DOCUMENT = {"type": "object", "properties": {"errors": {"type": "array", "items": {"$ref": "#/components/schemas/error"}}}}


# --- reading OpenAPI 3.0 as JSON Schema -------------------------------------------------------


def _null_allowed(schema: dict[str, Any]) -> dict[str, Any]:
    """A schema with `nullable: true` as JSON Schema: null is one more value it takes."""
    rest = {k: v for k, v in schema.items() if k != "nullable"}
    kind = rest.get("type")
    if isinstance(kind, str):
        rest["type"] = [kind, "null"]
    if isinstance(rest.get("enum"), list) and None not in rest["enum"]:
        rest["enum"] = [*rest["enum"], None]
    if "type" not in rest:  # a $ref, oneOf or anyOf: null beside what it names
        return {"anyOf": [{"type": "null"}, rest]}
    return rest


def as_json_schema(node: Any) -> Any:
    """The document (or any part of it) with every `nullable: true` read as JSON Schema reads it."""
    if isinstance(node, list):
        return [as_json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    converted = {key: as_json_schema(value) for key, value in node.items()}
    return _null_allowed(converted) if converted.get("nullable") is True else converted


_DATE_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")


def _date_time(text: object) -> bool:
    """RFC 3339: a date, a time and its offset (a time without an offset names no instant)."""
    if not isinstance(text, str):
        return True
    if not _DATE_TIME.match(text):
        return False
    datetime.fromisoformat(text.upper().replace("Z", "+00:00"))
    return True


def _date(text: object) -> bool:
    if isinstance(text, str):
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
            return False
        date.fromisoformat(text)
    return True


def _uuid(text: object) -> bool:
    return not isinstance(text, str) or (len(text) == 36 and str(uuid.UUID(text)) == text.lower())


def _uri(text: object) -> bool:
    """An absolute URI: a scheme, then no spaces."""
    return not isinstance(text, str) or re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]*:[^\s]+", text) is not None


def _ipv4(text: object) -> bool:
    if isinstance(text, str):
        ipaddress.IPv4Address(text)
    return True


FORMATS = FormatChecker(formats=())
for _name, _check, _raises in (
    ("date-time", _date_time, ValueError),
    ("date", _date, ValueError),
    ("uuid", _uuid, ValueError),
    ("uri", _uri, ValueError),
    ("ipv4", _ipv4, ValueError),
):
    FORMATS.checks(_name, raises=_raises)(_check)


# --- the document and its readings -------------------------------------------------------------


def pointer_parts(pointer: str) -> list[str]:
    if pointer and not pointer.startswith("/"):
        raise ValueError(f"not a JSON pointer: {pointer!r}")
    return [part.replace("~1", "/").replace("~0", "~") for part in pointer.split("/")[1:]]


def resolve(document: Any, pointer: str) -> Any:
    """The node `pointer` names; KeyError or IndexError when it names nothing."""
    node = document
    for part in pointer_parts(pointer):
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


def _apply(document: Any, operation: Mapping[str, Any]) -> None:
    """One JSON Patch (RFC 6902) operation: `add` or `replace`."""
    *parents, last = pointer_parts(operation["path"])
    parent = document
    for part in parents:
        parent = parent[int(part)] if isinstance(parent, list) else parent[part]
    op = operation["op"]
    if isinstance(parent, list):
        if op == "add":
            parent.insert(len(parent) if last == "-" else int(last), operation["value"])
        else:
            parent[int(last)] = operation["value"]
        return
    if op == "replace" and last not in parent:
        raise KeyError(f"{operation['path']}: nothing to replace")
    if op not in ("add", "replace"):
        raise ValueError(f"unsupported patch op {op!r}")
    parent[last] = operation["value"]


@dataclass(frozen=True)
class Reading:
    """One place where the document contradicts itself or is silent, and the reading followed."""

    id: str
    kind: str  # "contradiction" or "silence"
    pointers: tuple[str, ...]
    document_says: str
    sandbox_follows: str
    patch: tuple[Mapping[str, Any], ...]
    # Silences: status -> "errors", the answer added to each operation the pointers name (their
    # `responses`), or to every operation when `every_operation`.
    responses: Mapping[str, str]
    every_operation: bool
    # Examples of the document that break their schema, where the sandbox follows the schema.
    examples: tuple[str, ...]


def load_readings(path: Path = READINGS) -> list[Reading]:
    entries = json.loads(path.read_text())["readings"]
    return [
        Reading(
            id=e["id"],
            kind=e["kind"],
            pointers=tuple(e["pointers"]),
            document_says=e["document_says"],
            sandbox_follows=e["sandbox_follows"],
            patch=tuple(e.get("patch", ())),
            responses=dict(e.get("responses", {})),
            every_operation=bool(e.get("every_operation", False)),
            examples=tuple(e.get("examples", ())),
        )
        for e in entries
    ]


def read_document(readings: list[Reading]) -> dict[str, Any]:
    """The vendored document with each reading applied."""
    document: dict[str, Any] = json.loads(DOCUMENT.read_text())
    for reading in readings:
        for operation in reading.patch:
            _apply(document, operation)
        if not reading.responses:
            continue
        if reading.every_operation:
            targets = [op["responses"] for item in document["paths"].values() for method, op in item.items() if method in METHODS]
        else:
            targets = [resolve(document, pointer) for pointer in reading.pointers]
        for responses in targets:
            for status, shape in reading.responses.items():
                if shape != "errors":
                    raise ValueError(f"{reading.id}: a silence adds the error document, not {shape!r}")
                answer = {"description": reading.sandbox_follows, "content": {"application/json": {"schema": ERRORS_DOCUMENT}}}
                responses.setdefault(status, answer)
    return document


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def readings_table(readings: list[Reading]) -> str:
    """The list as docs/sandbox.md shows it: one row per reading."""
    rows = ["| Where (JSON pointer) | What the document says | What the sandbox does |", "|---|---|---|"]
    for reading in readings:
        where = "<br>".join(f"`{_cell(p)}`" for p in reading.pointers)
        rows.append(f"| {where} | {_cell(reading.document_says)} | {_cell(reading.sandbox_follows)} |")
    return "\n".join(rows)


# --- operations --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Operation:
    method: str  # upper case
    template: str  # "/shipments/{id}"
    pointer: str  # "/paths/~1shipments~1{id}/get"

    @property
    def name(self) -> str:
        return f"{self.method} {self.template}"


def _escape(part: str) -> str:
    return part.replace("~", "~0").replace("/", "~1")


class Reference:
    """The read document: its operations, and validation of answers and requests against them."""

    def __init__(self, readings: list[Reading] | None = None) -> None:
        self.readings = load_readings() if readings is None else readings
        self.raw = read_document(self.readings)
        self.document = as_json_schema(self.raw)
        self.registry: Registry[Any] = Registry().with_resource(URI, Resource.opaque(self.document))
        self.operations: dict[tuple[str, str], Operation] = {}
        for template, item in self.document["paths"].items():
            for method in METHODS:
                if method in item:
                    self.operations[(method.upper(), template)] = Operation(
                        method.upper(), template, f"/paths/{_escape(template)}/{method}"
                    )

    def validator(self, pointer: str) -> Draft202012Validator:
        return Draft202012Validator({"$ref": f"{URI}#{pointer}"}, registry=self.registry, format_checker=FORMATS)

    def schema_problems(self, pointer: str, instance: Any) -> list[str]:
        """Why `instance` does not follow the schema at `pointer` (none when it does)."""
        return [_described(error) for error in self.validator(pointer).iter_errors(instance)]

    def operation(self, method: str, path: str) -> Operation | None:
        """The operation a request names (`/v2` and any query left off); literal segments win over
        parameters (`/webhooks/events` is not `/webhooks/{id}`)."""
        path = path.split("?", 1)[0].removeprefix("/v2")
        parts = path.strip("/").split("/")
        best: tuple[int, Operation] | None = None
        for (verb, template), op in self.operations.items():
            pattern = template.strip("/").split("/")
            if verb != method.upper() or len(pattern) != len(parts):
                continue
            if all(p.startswith("{") or p == actual for p, actual in zip(pattern, parts, strict=True)):
                literal = sum(not p.startswith("{") for p in pattern)
                if best is None or literal > best[0]:
                    best = (literal, op)
        return best[1] if best else None

    def _node(self, pointer: str) -> Any:
        return resolve(self.document, pointer)

    def declared_statuses(self, operation: Operation) -> dict[str, Any]:
        responses: dict[str, Any] = self._node(operation.pointer).get("responses") or {}
        return responses

    def answer_problems(self, operation: Operation, status: int, content_type: str | None, body: bytes) -> list[str]:
        """Why an answer is not one the operation declares: its status, its content type, its body."""
        response = self.declared_statuses(operation).get(str(status))
        if response is None:
            return [f"status {status} is not one {operation.name} declares ({', '.join(self.declared_statuses(operation))})"]
        content: dict[str, Any] = response.get("content") or {}
        media = (content_type or "").split(";")[0].strip().lower()
        if not content:
            return [] if not body else [f"a body ({media or 'no content type'}) where {operation.name} {status} declares none"]
        if media not in content:
            return [f"content type {media or 'none'!r} is not one {operation.name} {status} declares ({', '.join(content)})"]
        if "schema" not in content[media]:
            return []
        try:
            instance = json.loads(body)
        except ValueError:
            return ["the body is not JSON"]
        status_pointer = f"{operation.pointer}/responses/{status}/content/{_escape(media)}/schema"
        return self.schema_problems(status_pointer, instance)

    def _parameters(self, operation: Operation) -> dict[str, dict[str, Any]]:
        """The operation's query parameters (its own and its path's), by name."""
        path_item = self._node(operation.pointer.rsplit("/", 1)[0])
        declared = [*(path_item.get("parameters") or []), *(self._node(operation.pointer).get("parameters") or [])]
        return {p["name"]: p for p in declared if p.get("in") == "query"}

    def query_problems(self, operation: Operation, query: str) -> list[str]:
        """Why a request's query is not the operation's: a parameter it does not declare, or a
        value its declared schema does not take."""
        declared = self._parameters(operation)
        problems = []
        sent = parse_qsl(query, keep_blank_values=True)
        for name, value in sent:
            parameter = declared.get(name)
            if parameter is None:
                problems.append(f"{name} is not a parameter {operation.name} declares ({', '.join(declared) or 'none'})")
                continue
            schema = parameter.get("schema") or {}
            problems.extend(f"{name}={value!r}: {p}" for p in _query_value_problems(schema, value))
        for name, parameter in declared.items():
            if parameter.get("required") and name not in {n for n, _ in sent}:
                problems.append(f"{name} is required by {operation.name}")
        return problems

    def body_problems(self, operation: Operation, content_type: str | None, body: bytes) -> list[str]:
        """Why a request's body is not the operation's `requestBody`."""
        request_body = self._node(operation.pointer).get("requestBody")
        if request_body is None:
            return [f"{operation.name} takes no body"] if body else []
        if not body:
            return [f"{operation.name} requires a body"] if request_body.get("required") else []
        media = (content_type or "").split(";")[0].strip().lower()
        content = request_body.get("content") or {}
        if media not in content:
            return [f"content type {media or 'none'!r} is not one {operation.name} takes ({', '.join(content)})"]
        try:
            instance = json.loads(body)
        except ValueError:
            return ["the body is not JSON"]
        return self.schema_problems(f"{operation.pointer}/requestBody/content/{_escape(media)}/schema", instance)

    @cached_property
    def resource_types(self) -> dict[str, str]:
        """Resource type -> the component schema of that type: a schema named as the type, with a
        `type` member that is that type (or any string)."""
        found: dict[str, str] = {}
        for name, schema in self.document["components"]["schemas"].items():
            member = (schema.get("properties") or {}).get("type")
            if isinstance(member, dict) and member.get("enum", [name]) == [name]:
                found[name] = f"/components/schemas/{_escape(name)}"
        return found

    def resource_problems(self, resource: Any) -> list[str]:
        """Why a resource is not its type's component schema (a type the document does not define
        is a problem too)."""
        type_ = resource.get("type") if isinstance(resource, dict) else None
        pointer = self.resource_types.get(str(type_))
        if pointer is None:
            return [f"{type_!r} is not a resource type the reference defines"]
        return self.schema_problems(pointer, resource)

    def iter_operations(self) -> Iterator[Operation]:
        return iter(self.operations.values())


def _query_value_problems(schema: Mapping[str, Any], text: str) -> list[str]:
    """A query value is text: read it as the declared type, then check the schema's rules."""
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    value: Any = text
    if "integer" in kinds:
        if not re.fullmatch(r"-?\d+", text):
            return ["not an integer"]
        value = int(text)
    elif "number" in kinds:
        try:
            value = float(text)
        except ValueError:
            return ["not a number"]
    elif "boolean" in kinds:
        if text not in ("true", "false"):
            return ["not true or false"]
        value = text == "true"
    validator = Draft202012Validator(dict(schema), format_checker=FORMATS)
    return [error.message for error in validator.iter_errors(value)]


def _described(error: Any) -> str:
    """One line: where, and why. A value no branch of an `anyOf` takes is described by the branch
    it came nearest to (the error deepest in the value)."""
    while error.validator in ("anyOf", "oneOf") and error.context:
        error = max(error.context, key=lambda e: (len(e.absolute_path), e.validator != "enum"))
    where = "/".join(str(p) for p in error.absolute_path) or "(body)"
    message = error.message if len(error.message) < 200 else error.message[:200] + "..."
    return f"{where}: {message}"


REFERENCE = Reference()


def copied_document() -> dict[str, Any]:
    """The vendored document as published (no reading applied)."""
    return copy.deepcopy(json.loads(DOCUMENT.read_text()))
