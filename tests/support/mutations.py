"""Answers of the service rewritten at random: any member null, absent, an unknown enum value, or
with unknown members beside it (only what makes a resource a resource is kept)."""

from __future__ import annotations

import itertools
import random
from typing import Any

import httpx

IDENTITY = ("id", "type")

MUTATIONS = ("null", "absent", "unknown_enum", "unknown_member")


class Mutator:
    """Rewrites answers: each member, with probability `rate`, by one of the enabled mutations."""

    def __init__(self, rng: random.Random, rate: float, kinds: tuple[str, ...]) -> None:
        self.rng, self.rate, self.kinds = rng, rate, kinds
        self.counter = itertools.count()

    def __call__(self, request: httpx.Request, body: Any) -> Any:
        if isinstance(body, dict):
            for name in list(body):
                if name not in ("data", "included", "errors"):
                    self._member(body, name, links=name == "links")
            for resource in self._resources(body):
                self._object(resource, protected=True)
        return body

    @staticmethod
    def _resources(body: dict[str, Any]) -> list[dict[str, Any]]:
        data = body.get("data")
        items = data if isinstance(data, list) else [data] if isinstance(data, dict) else []
        included = body.get("included") if isinstance(body.get("included"), list) else []
        return [r for r in [*items, *included] if isinstance(r, dict)]

    def _object(self, value: dict[str, Any], *, protected: bool = False, links: bool = False) -> None:
        for name in list(value):
            if not (protected and name in IDENTITY):
                self._member(value, name, links=links or name == "links")
        if self.kinds and "unknown_member" in self.kinds and self.rng.random() < self.rate:
            value[f"x_never_seen_{next(self.counter)}"] = {"nested": [1, "two", None]}

    def _member(self, parent: dict[str, Any], name: str, *, links: bool = False) -> None:
        """`links` members are addresses, not enum values: they may go null or absent, not change."""
        value = parent[name]
        if self.rng.random() < self.rate:
            kind = self.rng.choice(self.kinds)
            if kind == "null":
                parent[name] = None
                return
            if kind == "absent":
                del parent[name]
                return
            if kind == "unknown_enum" and isinstance(value, str) and not links and name != "secret":  # a credential is no enum
                parent[name] = "zz_never_seen_value"
                return
        if isinstance(value, dict):
            self._object(value, links=links)
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, dict):
                    self._object(item, links=links)
