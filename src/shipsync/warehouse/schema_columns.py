"""Column kinds of the warehouse's SQLModel tables: timestamps with time zone, JSON, text arrays, big
integers and doubles, each nullable unless told otherwise."""

from __future__ import annotations

from typing import Any

from sqlalchemy import ARRAY, JSON, BigInteger, DateTime, Double, String
from sqlmodel import Field


def ts(**kw: Any) -> Any:
    return Field(default=None, sa_type=DateTime(timezone=True), **kw)


def json_field(**kw: Any) -> Any:
    return Field(default=None, sa_type=JSON, **kw)


def strings(**kw: Any) -> Any:
    return Field(default=None, sa_type=ARRAY(String), **kw)


def bigint(**kw: Any) -> Any:
    return Field(default=None, sa_type=BigInteger, **kw)


def double(**kw: Any) -> Any:
    return Field(default=None, sa_type=Double, **kw)
