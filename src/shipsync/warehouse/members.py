"""What a declared resource's members are as columns: name, SQL type, and the coercion that keeps
a value of the declared type or refuses it (the member then goes to the row's `leftovers`).

Derived once per declaration from its field annotations (see `shipsync.api.declared`).
"""

from __future__ import annotations

import math
import re
import types
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import date, datetime
from functools import cache
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel

from shipsync.api.declared import Declared, Struct, field_marks
from shipsync.api.models import Ref
from shipsync.json_text import dumps
from shipsync.warehouse.coerce import utc_timestamp
from shipsync.warehouse.identifiers import ident

Kind = Literal["text", "bool", "int", "float", "timestamp", "date", "texts", "struct", "structs", "json", "ref", "refs"]


class Misfit:
    """A value that does not fit its member's type (kept in leftovers, the column left NULL)."""


MISFIT = Misfit()
# Plain decimal notation only: "nan", "inf", "1_000" or " 1" are not numbers the service means.
_NUMBER_TEXT = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
Coerce = Callable[[Any], Any]


# Where in the resource a member is sent.
Place = Literal["attributes", "relationships", "links", "top_level"]


@dataclass(frozen=True)
class LinkTable:
    """Where a to-many relationship's targets go: rows (owner, target) of their own table."""

    table: str
    owner_column: str
    target_column: str


@dataclass(frozen=True)
class Member:
    name: str  # as the service names it (attribute, relationship, link or top-level member)
    column: str
    kind: Kind
    sql_type: str
    coerce: Coerce
    polymorphic: bool = False  # a to-one relationship that also gets `<name>_type`
    place: Place = "attributes"
    link_table: LinkTable | None = None  # a to-many relationship kept in a link table, not a column
    also_sent_as: str | None = None  # another name the service sends the attribute under
    holds_secrets: bool = False  # a struct with `secret()` fields: a value that does not fit is not kept
    struct_fields: frozenset[str] = frozenset()  # a struct's (or list of structs') declared members

    def carries_unknown(self, value: Any) -> bool:
        """Whether a struct value (or an item of a list of them) has members its struct does not
        declare: the typed column keeps the declared ones, the row's leftovers the value as sent."""
        if not self.struct_fields:
            return False
        items = value if isinstance(value, list) else [value]
        return any(isinstance(item, dict) and item.keys() - self.struct_fields for item in items)


def _text(value: Any) -> Any:
    return value if isinstance(value, str) else MISFIT


def _bool(value: Any) -> Any:
    return value if isinstance(value, bool) else MISFIT


def _number_text(value: str) -> int | float | None:
    """A number the service sent as text (ports' `latitude` is `"53.53"`), or None when it is not one."""
    if len(value) > 64 or not _NUMBER_TEXT.fullmatch(value):
        return None
    return int(value) if value.lstrip("+-").isdigit() else float(value)


def _int(value: Any) -> Any:
    if isinstance(value, str):
        value = _number_text(value)
    if isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**63:
        return value
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**63:
        return int(value)
    return MISFIT


def _float(value: Any) -> Any:
    if isinstance(value, str):
        value = _number_text(value)
    if not isinstance(value, int | float) or isinstance(value, bool):
        return MISFIT
    try:
        number = float(value)
    except OverflowError:  # an integer past a double's range
        return MISFIT
    return number if math.isfinite(number) else MISFIT


def _timestamp(value: Any) -> Any:
    """An ISO 8601 instant, re-written in UTC (a time without offset is taken as UTC)."""
    instant = utc_timestamp(value)
    return MISFIT if instant is None else instant


def _date(value: Any) -> Any:
    if not isinstance(value, str):
        return MISFIT
    try:
        return date.fromisoformat(value[:10]).isoformat() if len(value) >= 10 else MISFIT
    except ValueError:
        return MISFIT


def _texts(value: Any) -> Any:
    return value if isinstance(value, list) and all(isinstance(v, str) for v in value) else MISFIT


def _struct_of(model: type[BaseModel]) -> tuple[str, Callable[[Any], Any]]:
    """SQL STRUCT type and a coercion to a complete dict (every field present: DuckDB's JSON cast needs them)."""
    fields = [(name, _analyse(field.annotation)) for name, field in model.model_fields.items() if not field_marks(field).get("secret")]
    sql = "STRUCT(" + ", ".join(f"{ident(name)} {sql_type}" for name, (_, sql_type, _) in fields) + ")"

    def coerce(value: Any) -> Any:
        if not isinstance(value, dict):
            return MISFIT
        out = {}
        for name, (_, _, sub) in fields:
            item = value.get(name)
            out[name] = None if item is None else sub(item)
            if out[name] is MISFIT:
                return MISFIT
        return out

    return sql, coerce


def _structs_coerce(one: Coerce) -> Coerce:
    def coerce(value: Any) -> Any:
        if not isinstance(value, list):
            return MISFIT
        items = [one(v) for v in value]
        return MISFIT if any(i is MISFIT for i in items) else items

    return coerce


def _nested_json(coerce: Coerce) -> Coerce:
    """Structs travel to DuckDB as JSON text, cast there to the STRUCT type."""

    def to_json(value: Any) -> Any:
        out = coerce(value)
        return out if out is MISFIT else dumps(out)

    return to_json


_SCALARS: dict[Any, tuple[Kind, str, Coerce]] = {
    str: ("text", "VARCHAR", _text),
    bool: ("bool", "BOOLEAN", _bool),
    int: ("int", "BIGINT", _int),
    float: ("float", "DOUBLE", _float),
    datetime: ("timestamp", "TIMESTAMP WITH TIME ZONE", _timestamp),
    date: ("date", "DATE", _date),
}


def _analyse(annotation: Any) -> tuple[Kind, str, Coerce]:
    """(kind, SQL type, coercion) of a field annotation; nested structs coerce to dicts."""
    origin = get_origin(annotation)
    if origin is Annotated:  # e.g. `Day`: the validator is the client model's, the type is the column's
        return _analyse(get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        (inner,) = [a for a in get_args(annotation) if a is not type(None)]
        return _analyse(inner)
    if origin is Literal:
        return "text", "VARCHAR", _text  # any value is kept: the service may add to the set
    if annotation in _SCALARS:
        return _SCALARS[annotation]
    if annotation is Ref:
        return "ref", "VARCHAR", _text
    if isinstance(annotation, type) and issubclass(annotation, Struct):
        sql, coerce = _struct_of(annotation)
        return "struct", sql, coerce
    if origin is list:
        (item,) = get_args(annotation)
        if item is str:
            return "texts", "VARCHAR[]", _texts
        if item is Ref:
            return "refs", "VARCHAR[]", _texts
        if isinstance(item, type) and issubclass(item, Struct):
            sql, coerce = _struct_of(item)
            return "structs", f"{sql}[]", _structs_coerce(coerce)
    return "json", "JSON", dumps


def _singular(name: str) -> str:
    return name[:-1] if name.endswith("s") else name


def _link_table(declaration: type[Declared], marks: dict[str, Any]) -> LinkTable | None:
    if "link_table" not in marks:
        return None
    return LinkTable(str(marks["link_table"]), f"{declaration.resource_types[0]}_id", str(marks["link_column"]))


@cache
def members_of(declaration: type[Declared]) -> tuple[Member, ...]:
    """Every declared member of a resource, in declaration order (base fields `id`, `type`, `self_link` aside)."""
    found = []
    for field_name, field in declaration.model_fields.items():
        if field_name in ("id", "type", "self_link"):
            continue
        name = field.alias or field_name
        marks = field_marks(field)
        if marks.get("secret"):
            continue
        kind, sql_type, coerce = _analyse(field.annotation)
        if marks.get("link"):
            found.append(Member(name.removesuffix("_link"), name, kind, sql_type, coerce, place="links"))
        elif "top_level" in marks:
            found.append(Member(str(marks["top_level"]), name, kind, sql_type, coerce, place="top_level"))
        elif kind == "ref":
            found.append(Member(name, f"{name}_id", kind, sql_type, coerce, polymorphic=bool(marks.get("types")), place="relationships"))
        elif kind == "refs":
            linked = _link_table(declaration, marks)
            found.append(Member(name, f"{_singular(name)}_ids", kind, sql_type, coerce, place="relationships", link_table=linked))
        elif kind in ("struct", "structs"):
            struct = Member(name, name, kind, sql_type, _nested_json(coerce), holds_secrets=_holds_secrets(field.annotation))
            found.append(replace(struct, struct_fields=_struct_fields(field.annotation)))
        else:
            also = marks.get("also_sent_as")
            found.append(Member(name, name, kind, sql_type, coerce, also_sent_as=also if isinstance(also, str) else None))
    return tuple(found)


def _struct_fields(annotation: Any) -> frozenset[str]:
    """The member names a struct annotation (or a list or optional of one) declares."""
    if isinstance(annotation, type) and issubclass(annotation, Struct):
        return frozenset(f.alias or n for n, f in annotation.model_fields.items())
    return frozenset().union(*(_struct_fields(arg) for arg in get_args(annotation)))


def _holds_secrets(annotation: Any) -> bool:
    """Whether a struct annotation (or a list or optional of one) has fields marked `secret()`."""
    if isinstance(annotation, type) and issubclass(annotation, Struct):
        return any(field_marks(f).get("secret") for f in annotation.model_fields.values())
    return any(_holds_secrets(arg) for arg in get_args(annotation))


@cache
def secret_members(declaration: type[Declared]) -> frozenset[str]:
    """Attributes that are never stored, in a column or in `leftovers` (see `api.declared.secret`)."""
    return frozenset(f.alias or n for n, f in declaration.model_fields.items() if field_marks(f).get("secret"))
