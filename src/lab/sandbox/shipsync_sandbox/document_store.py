"""An account's documents, made when first read: the seeded ones from their number (each from its
own generator, see `seed_documents.py`), and those `/_admin/advance` adds or touches later.

Seeded documents are created in the order of their numbers, so a listing by creation (either way,
or by id) needs no document to be made but those of the page it answers with.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime, timedelta
from typing import overload

from shipsync_sandbox.listing_order import ListingOrder
from shipsync_sandbox.resources import Resource, stable_id
from shipsync_sandbox.seed_documents import DocumentSource, make_document
from shipsync_sandbox.timeline import iso
from shipsync_sandbox.world import Account


class DocumentStore(Mapping[str, Resource]):
    def __init__(self, account: Account, source: DocumentSource, count: int) -> None:
        self.account, self.source, self.count = account, source, count
        self._made: dict[int, Resource] = {}
        self._created: dict[int, datetime] = {}  # documents added after seeding
        self._numbers: dict[str, int] = {}

    def id_of(self, d: int) -> str:
        return stable_id("document", self.source.seed, self.source.index, d)

    def document(self, d: int) -> Resource:
        """Document number `d`, made (with its email submission and extraction) on first use."""
        made = self._made.get(d)
        if made is None:
            made, *related = make_document(self.account, self.source, d, self._created.get(d))
            for resource in related:
                self.account.add_related(resource)
            self._made[d] = made
        return made

    def add(self, created: list[datetime]) -> list[str]:
        """New documents created at these instants (after every existing one); their ids."""
        first = self.count
        for n, moment in enumerate(sorted(created)):
            self._created[first + n] = moment
        self.count += len(created)
        return [self.id_of(d) for d in range(first, self.count)]

    def touch(self, d: int, at: datetime) -> None:
        """A document changed after creation (re-classified, its extraction re-run) at `at`."""
        document = self.document(d)
        document["attributes"] = {**document["attributes"], "updated_at": iso(at)}
        ref = document["relationships"]["last_document_representation"]["data"]
        representation = self.account.resource(ref["type"], ref["id"])
        if representation is not None:
            representation["attributes"] = {**representation["attributes"], "updated_at": iso(at)}

    def in_order(self, order: ListingOrder) -> Sequence[Resource]:
        """The documents listed in `order` (`reference`: newest first, the reference states none)."""
        if order == "id":
            numbers = sorted(range(self.count), key=self.id_of)
            return _Ordered(self, lambda i: numbers[i])
        if order == "oldest":
            return _Ordered(self, lambda i: i)
        return _Ordered(self, lambda i: self.count - 1 - i)

    def __getitem__(self, document_id: str) -> Resource:
        if len(self._numbers) < self.count:
            self._numbers.update((self.id_of(d), d) for d in range(len(self._numbers), self.count))
        return self.document(self._numbers[document_id])

    def __iter__(self) -> Iterator[str]:
        return (self.id_of(d) for d in range(self.count))

    def __len__(self) -> int:
        return self.count


class _Ordered(Sequence[Resource]):
    """The documents in one order (`number` maps a position to a document's number), made only as
    they are indexed."""

    def __init__(self, store: DocumentStore, number: Callable[[int], int]) -> None:
        self.store, self._number = store, number

    @overload
    def __getitem__(self, i: int) -> Resource: ...
    @overload
    def __getitem__(self, i: slice) -> list[Resource]: ...
    def __getitem__(self, i: int | slice) -> Resource | list[Resource]:
        if isinstance(i, slice):
            return [self.store.document(self._number(n)) for n in range(*i.indices(len(self)))]
        if not -len(self) <= i < len(self):
            raise IndexError(i)
        return self.store.document(self._number(i % len(self)))

    def __len__(self) -> int:
        return self.store.count


def spacing_for(documents: int, span: timedelta) -> timedelta:
    """Time between seeded documents: three hours, closer when that many would not fit in `span`."""
    return min(timedelta(hours=3), span / max(1, documents))
