"""Recorded exchanges (the sandbox's `exchange_log`) checked against the service's reference
(`contract_schemas.REFERENCE`): each answer is one its operation declares, each request one its
operation takes, each webhook delivery the notification the reference shapes; and the figure, per
operation, of how many were.

A request's custom field values are also held to their definition's data type (the reference: a
value's "type depends on definition"): a boolean is `true` or `false`, a number a number, a
date-time an instant with its offset (the document's `date-time`), a list of options a list. The
definitions are read from the exchanges' own answers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from shipsync_sandbox.exchange_log import Exchange
from support.contract_schemas import FORMATS, REFERENCE, Reference

GOAL = 0.95
Check = Callable[[Exchange], list[str]]


def answer_problems(exchange: Exchange, reference: Reference = REFERENCE) -> list[str]:
    """Why an answer is not one the reference declares for its operation (none when it is)."""
    operation = reference.operation(exchange.method, exchange.path)
    if operation is None:
        return [f"{exchange.method} {exchange.path} is no operation of the reference"]
    return reference.answer_problems(operation, exchange.status, exchange.response_type, exchange.response_body)


def request_problems(exchange: Exchange, reference: Reference = REFERENCE) -> list[str]:
    """Why a request is not one its operation takes: a query parameter it does not declare or a
    value it does not take, or a body that breaks its `requestBody`."""
    operation = reference.operation(exchange.method, exchange.path)
    if operation is None:
        return [f"{exchange.method} {exchange.path} is no operation of the reference"]
    return [
        *reference.query_problems(operation, exchange.query),
        *reference.body_problems(operation, exchange.request_type, exchange.request_body),
    ]


def operation_name(exchange: Exchange, reference: Reference = REFERENCE) -> str:
    operation = reference.operation(exchange.method, exchange.path)
    return operation.name if operation else f"{exchange.method} {exchange.path}"


@dataclass
class Figure:
    valid: int = 0
    total: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def share(self) -> float:
        return self.valid / self.total if self.total else 1.0


def figures(exchanges: Iterable[Exchange], check: Check, reference: Reference = REFERENCE) -> dict[str, Figure]:
    """Per operation: how many exchanges pass `check`, of how many, and the first problems found."""
    found: dict[str, Figure] = {}
    for exchange in exchanges:
        problems = check(exchange)
        figure = found.setdefault(operation_name(exchange, reference), Figure())
        figure.total += 1
        figure.valid += not problems
        where = f"{exchange.method} {exchange.path}{'?' + exchange.query if exchange.query else ''} {exchange.status}"
        figure.problems.extend(f"{where}: {p}" for p in problems[:2] if len(figure.problems) < 4)
    return found


def table(found: Mapping[str, Figure], what: str) -> list[str]:
    """The figures as lines, one per operation, then the whole."""
    lines = [f"{f.valid:5d}/{f.total:<5d} {f.share:6.1%}  {name}" for name, f in sorted(found.items())]
    valid, total = sum(f.valid for f in found.values()), sum(f.total for f in found.values())
    lines.append(f"{valid:5d}/{total:<5d} {valid / max(total, 1):6.1%}  {what} ({len(found)} operations)")
    return lines


def short_of(found: Mapping[str, Figure], goal: float = GOAL) -> list[str]:
    """The operations under the goal, with their first problems."""
    return [f"{name}: {p}" for name, f in sorted(found.items()) if f.share < goal for p in f.problems or ["(no problem recorded)"]]


# --- deliveries --------------------------------------------------------------------------------


def delivery_problems(body: Any, reference: Reference = REFERENCE) -> list[str]:
    """Why a webhook delivery is not a notification as the reference shapes it: its `data` a
    `webhook_notification`, each included record its type's component schema."""
    if not isinstance(body, dict) or not isinstance(body.get("data"), dict):
        return ["not a document with one `data` resource"]
    problems = [f"data/{p}" for p in reference.schema_problems("/components/schemas/webhook_notification", body["data"])]
    for n, resource in enumerate(body.get("included") or []):
        problems.extend(f"included/{n} ({resource.get('type')}): {p}" for p in reference.resource_problems(resource))
    return problems


# --- custom field values by their definition's data type ------------------------------------------

_TYPES: dict[str, Callable[[Any], bool]] = {
    "short_text": lambda v: isinstance(v, str),
    "reference": lambda v: isinstance(v, str),
    "enum": lambda v: isinstance(v, str),
    "date": lambda v: isinstance(v, str),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "datetime": lambda v: isinstance(v, str) and FORMATS.conforms(v, "date-time"),
    "enum_multi": lambda v: isinstance(v, list) and all(isinstance(i, str) for i in v),
}


def _json(body: bytes) -> Any:
    try:
        return json.loads(body) if body else None
    except ValueError:
        return None


def _resources(body: Any) -> list[dict[str, Any]]:
    if not isinstance(body, dict):
        return []
    data = body.get("data")
    return [r for r in [*(data if isinstance(data, list) else [data]), *(body.get("included") or [])] if isinstance(r, dict)]


@dataclass
class Definitions:
    """What the exchanges' answers said of the account's definitions and values."""

    by_slug: dict[str, str] = field(default_factory=dict)  # api_slug -> data_type
    by_id: dict[str, str] = field(default_factory=dict)  # definition id -> data_type
    value_slugs: dict[str, str] = field(default_factory=dict)  # custom field id -> api_slug

    def learn(self, exchanges: Iterable[Exchange]) -> None:
        for exchange in exchanges:
            for resource in _resources(_json(exchange.response_body)):
                attributes = resource.get("attributes") or {}
                if resource.get("type") == "custom_field_definition" and isinstance(attributes.get("data_type"), str):
                    self.by_slug[str(attributes.get("api_slug"))] = attributes["data_type"]
                    self.by_id[str(resource.get("id"))] = attributes["data_type"]
                if resource.get("type") == "custom_field" and isinstance(attributes.get("api_slug"), str):
                    self.value_slugs[str(resource.get("id"))] = attributes["api_slug"]


def _sent_values(exchange: Exchange, definitions: Definitions) -> list[tuple[str, str | None, Any]]:
    """(where, data type, value) of each custom field value a request sends."""
    body = _json(exchange.request_body)
    data = body.get("data") if isinstance(body, dict) else None
    attributes = (data.get("attributes") if isinstance(data, dict) else None) or {}
    path = exchange.path.removeprefix("/v2")
    found: list[tuple[str, str | None, Any]] = []
    if (
        re.fullmatch(r"/(custom_fields|(shipments|containers|tracking_requests)/[^/]+/custom_fields)(/[^/]+)?", path)
        and "value" in attributes
    ):
        slug = attributes.get("api_slug") or path.rsplit("/", 1)[-1]
        if path.startswith("/custom_fields/"):
            slug = definitions.value_slugs.get(path.rsplit("/", 1)[-1], slug)
        found.append(("value", definitions.by_slug.get(str(slug)), attributes["value"]))
    if path.startswith("/custom_field_definitions") and "default_value" in attributes and "/options" not in path:
        kind = attributes.get("data_type") or definitions.by_id.get(path.rsplit("/", 1)[-1])
        found.append(("default_value", kind if isinstance(kind, str) else None, attributes["default_value"]))
    staged = attributes.get("initial_custom_fields") if path == "/tracking_requests" else None
    for part in ("shipment", "containers") if isinstance(staged, dict) else ():
        for n, entry in enumerate(staged.get(part) or []):
            if isinstance(entry, dict) and "value" in entry:
                where = f"initial_custom_fields/{part}/{n}/value"
                found.append((where, definitions.by_slug.get(str(entry.get("api_slug"))), entry["value"]))
    return found


def value_type_problems(exchange: Exchange, definitions: Definitions) -> list[str]:
    """Why a request's custom field values are not of their definition's data type."""
    problems = []
    for where, kind, value in _sent_values(exchange, definitions):
        check = _TYPES.get(kind or "")
        if value is not None and check is not None and not check(value):
            problems.append(f"{where}: {value!r} is not a {kind} value")
    return problems
