"""The base of resources declared once: a pydantic class that is the client model and, through
`shipsync.warehouse.members`, the table and the normalizer.

A declaration lists the resource's members with their types (`X | None`: the service may answer
any member null). Attributes are plain fields; a field typed `Ref | None` is a to-one relationship
(a column `<name>_id`), `list[Ref]` a to-many one (a column `<singular>_ids`, or rows of a link
table: `link_table`). A link other than `self` is a field `<name>_link = link()`, a member outside
`attributes` (at the resource's top level) one marked `top_level(name)`. Adding a member is one
line. Members the declaration does not list are not dropped: the warehouse keeps them in the row's
`leftovers`, the client model in `raw`.
"""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from shipsync.api.jsonapi import JsonObject
from shipsync.api.models import ApiModel


class Struct(BaseModel):
    """A nested object member (a hold, a fee, the import deadlines): a STRUCT in the warehouse."""

    model_config = ConfigDict(extra="ignore")


def _day_of(value: Any) -> Any:
    """The date part of an instant: the service sends some days (`ind_facility_lfd_on`) as the
    instant that starts them (`2026-02-26T05:00:00Z`), as the warehouse's DATE columns read them."""
    return value[:10] if isinstance(value, str) and len(value) > 10 and value[10] in "Tt " else value


# A calendar day, read from a date or from the instant the service sends for it.
Day = Annotated[date, BeforeValidator(_day_of)]


def polymorphic(*types: str) -> Any:
    """A to-one relationship that may point at several types: the table also gets `<name>_type`."""
    return Field(default=None, json_schema_extra={"types": list(types)})


def link_table(table: str, column: str) -> Any:
    """A to-many relationship kept as rows of `table` (owner `<type>_id`, target `column`) rather than a list column."""
    return Field(default_factory=list, json_schema_extra={"link_table": table, "link_column": column})


def link() -> Any:
    """A field `<name>_link`: the resource's `links.<name>` (e.g. `download_link`)."""
    return Field(default=None, json_schema_extra={"link": True})


def top_level(name: str) -> Any:
    """A member sent beside `attributes` rather than in it (the metro area's member named "")."""
    return Field(default=None, json_schema_extra={"top_level": name})


def also_sent_as(name: str) -> Any:
    """An attribute the service also sends under another name (a tracking request's `tags` as
    `shipment_tags`): one column, filled from whichever came (the declared name first)."""
    return Field(default=None, json_schema_extra={"also_sent_as": name})


def secret() -> Any:
    """A member that is never stored: no column, not in `leftovers`, not in dumps or reprs (a
    webhook's `secret`, a header's `value`: either may be a credential, and analysts share the warehouse)."""
    return Field(default=None, exclude=True, repr=False, json_schema_extra={"secret": True})


def field_marks(field: Any) -> dict[str, Any]:
    """What `polymorphic`, `link_table`, `link`, `top_level`, `also_sent_as` and `secret` put on a field."""
    extra = field.json_schema_extra
    return extra if isinstance(extra, dict) else {}


class Derived(BaseModel):
    """A column computed in SQL from the row's other columns after every write (e.g. `has_holds`)."""

    sql_type: str
    expression: str


class Declared(ApiModel):
    """A resource whose members are declared once. Subclasses set the ClassVars below."""

    # The JSON:API types this declaration reads (a table may hold several, e.g. terminals).
    resource_types: ClassVar[tuple[str, ...]] = ()
    table_name: ClassVar[str] = ""
    # Store the JSON:API type in a `kind` column (when the table holds several types).
    kind_column: ClassVar[bool] = False
    derived: ClassVar[dict[str, Derived]] = {}
    # One line for the data dictionary: what a row is.
    row_is: ClassVar[str] = ""
    # The table's key: `id`, or a member that names the record better.
    key: ClassVar[str] = "id"
    # Rows also come from other resources' `included` and from webhook deliveries, found by type.
    # False: only the resource's own pull writes its table (it needs what that pull does, e.g. links).
    from_included: ClassVar[bool] = True
    # Columns the pipeline itself keeps, not the service (name -> SQL type): no pull writes them.
    local_columns: ClassVar[dict[str, str]] = {}
    # False: what the declaration does not name is dropped, not kept in `leftovers` (a resource that
    # may carry credentials anywhere, as a webhook's answer does).
    keeps_leftovers: ClassVar[bool] = True

    @classmethod
    def resource_values(cls, resource: JsonObject) -> dict[str, Any]:
        values = super().resource_values(resource)
        for field_name, field in cls.model_fields.items():
            name = field_marks(field).get("top_level")
            if isinstance(name, str) and name in resource:
                values[field_name] = resource[name]
            other = field_marks(field).get("also_sent_as")
            if isinstance(other, str) and values.get(field_name) is None and other in values:
                values[field_name] = values[other]
        return values
