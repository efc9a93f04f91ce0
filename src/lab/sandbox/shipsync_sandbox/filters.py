"""Listing filters of the sandbox, as the service applies them: instants compared as times,
prefixes, number searches. The listings declare no refusal of a filter: one the sandbox cannot
read matches nothing."""

from __future__ import annotations

from datetime import UTC, datetime

from starlette.requests import Request


def instant(text: str) -> datetime | None:
    """An ISO 8601 timestamp as an aware instant (a date alone is its midnight UTC); None if it is not one."""
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00").replace(" ", "+"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def in_range(value: str | None, request: Request, name: str) -> bool:
    """`filter[NAME][start]` <= value <= `filter[NAME][end]`, compared as instants whatever their offsets."""
    start = request.query_params.get(f"filter[{name}][start]")
    end = request.query_params.get(f"filter[{name}][end]")
    if start is None and end is None:
        return True
    moment = instant(value) if value is not None else None
    if moment is None:
        return False
    if start is not None and ((low := instant(start)) is None or moment < low):
        return False
    return end is None or ((high := instant(end)) is not None and moment <= high)


def matches_number(query: str, *numbers: str | None) -> bool:
    """`q`: a case-insensitive search over numbers (request, reference, bill of lading, container)."""
    wanted = query.strip().casefold()
    return any(n and wanted in n.casefold() for n in numbers)
