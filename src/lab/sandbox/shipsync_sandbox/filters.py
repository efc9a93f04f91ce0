"""Listing filters of the sandbox, as the service applies them: instants compared as times,
prefixes, number searches."""

from __future__ import annotations

from datetime import UTC, datetime

from starlette.requests import Request

from shipsync_sandbox.jsonapi_http import ApiProblem


def instant(text: str, parameter: str) -> datetime:
    """An ISO 8601 timestamp as an aware instant; a date alone is its midnight UTC; else a 400."""
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00").replace(" ", "+"))
    except ValueError:
        raise ApiProblem(400, "Bad Request", f"{parameter} must be an ISO 8601 timestamp", parameter=parameter) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def in_range(value: str | None, request: Request, name: str) -> bool:
    """`filter[NAME][start]` <= value <= `filter[NAME][end]`, compared as instants whatever their offsets."""
    start = request.query_params.get(f"filter[{name}][start]")
    end = request.query_params.get(f"filter[{name}][end]")
    if start is None and end is None:
        return True
    if value is None:
        return False
    moment = instant(value, name)
    if start is not None and moment < instant(start, f"filter[{name}][start]"):
        return False
    return end is None or moment <= instant(end, f"filter[{name}][end]")


def matches_number(query: str, *numbers: str | None) -> bool:
    """`q`: a case-insensitive search over numbers (request, reference, bill of lading, container)."""
    wanted = query.strip().casefold()
    return any(n and wanted in n.casefold() for n in numbers)
