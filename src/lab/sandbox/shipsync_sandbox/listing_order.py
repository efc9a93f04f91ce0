"""The order the sandbox lists records in (`SandboxOptions.listing_order`), so that tests can show
a client depends on no order: `newest` first, `oldest` first, by `id`, or `reference`, the order
the reference states for the listing (shipments and tracking requests newest first, containers
most recently refreshed first) and newest first where it states none.

A record's age is its `created_at` where it has one, else the order the sandbox made it in.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeVar

ListingOrder = Literal["reference", "newest", "oldest", "id"]
LISTING_ORDERS: tuple[ListingOrder, ...] = ("reference", "newest", "oldest", "id")
T = TypeVar("T")


def _identifier(item: Any) -> str:
    return str(item["id"])


def in_order(
    items: Sequence[T],
    order: ListingOrder,
    *,
    created: Callable[[T], Any] | None = None,
    stated: Callable[[list[T]], list[T]] | None = None,
    identifier: Callable[[T], str] = _identifier,
) -> list[T]:
    """`items`, made oldest first, in `order`. `created` says when each was made (ties by id);
    `stated` is the reference's own order for this listing (newest first when None)."""
    oldest = sorted(items, key=lambda i: (created(i), identifier(i))) if created is not None else list(items)
    if order == "id":
        return sorted(oldest, key=identifier)
    if order == "oldest":
        return oldest
    if order == "reference" and stated is not None:
        return stated(oldest)
    return oldest[::-1]
