"""Column kinds of the warehouse's SQLModel tables: timestamps with time zone, JSON and text arrays,
each nullable unless told otherwise."""

from __future__ import annotations

from typing import Any

from sqlalchemy import ARRAY, JSON, DateTime, String
from sqlmodel import Field


def ts(**kw: Any) -> Any:
    return Field(default=None, sa_type=DateTime(timezone=True), **kw)


def json_field(**kw: Any) -> Any:
    return Field(default=None, sa_type=JSON, **kw)


def strings(**kw: Any) -> Any:
    return Field(default=None, sa_type=ARRAY(String), **kw)
