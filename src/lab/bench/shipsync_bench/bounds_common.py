"""What the request-bounds benchmarks share: the seeded sandbox process and its admitted-requests
counter, the settings that point at it, and the row that sets a count beside its bound."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from shipsync.config import Settings, load_settings
from shipsync_bench.processes import SandboxProcess
from shipsync_bench.results import BenchResult, at_most

KEY = "sandbox-key-1"
PAGE = 100
GOAL = 1.25


def pages(records: int) -> int:
    return math.ceil(records / PAGE)


def minutes(requests: float) -> str:
    return f"{requests / 100:,.1f} min at 100/min"


def bounded(name: str, actual: int, bound: int, formula: str) -> BenchResult:
    label = f"{name}: {actual:,} requests = {minutes(actual)} (bound {bound:,} = {formula} = {minutes(bound)})"
    return at_most(label, float(actual), "requests", "lower bound", float(bound), GOAL)


@dataclass
class Sandbox:
    """A running sandbox process, its admitted-requests counter, and plain reads that are not counted."""

    process: SandboxProcess

    def admitted(self) -> int:
        admitted = self.process.stats(KEY)["admitted"]
        return int(str(admitted))

    def get(self, path: str) -> Any:
        response = httpx.get(f"{self.process.api_url}/{path}", headers={"Authorization": f"Token {KEY}"}, timeout=60)
        return response.raise_for_status().json()

    def total(self, path: str) -> int:
        return int(self.get(f"{path}{'&' if '?' in path else '?'}page[size]=1")["meta"]["total"])

    def every(self, path: str) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        for number in range(1, 10**6):
            body = self.get(f"{path}{'&' if '?' in path else '?'}page[size]={PAGE}&page[number]={number}")
            found += body["data"]
            if not body.get("links", {}).get("next"):
                return found
        return found

    def advance(self, query: str) -> dict[str, Any]:
        response = httpx.post(f"{self.process.url}/_admin/advance?{query}", headers={"Authorization": f"Token {KEY}"}, timeout=600)
        result: dict[str, Any] = response.raise_for_status().json()
        return result


def settings_for(sandbox: Sandbox, folder: Path) -> Settings:
    return load_settings(
        api_url=sandbox.process.api_url, api_key=KEY, rate_limit="0", warehouse=folder / "w.duckdb", secrets_file=folder / "secrets.json"
    )


def counted(sandbox: Sandbox, work: Any) -> tuple[int, Any]:
    """What `work()` returned, and the requests the sandbox admitted for it."""
    before = sandbox.admitted()
    result = work()
    return sandbox.admitted() - before, result
