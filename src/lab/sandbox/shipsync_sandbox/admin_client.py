"""The sandbox's admin routes as a client calls them: wait until it has delivered what it owes."""

from __future__ import annotations

import time

import httpx


def wait_for_deliveries(sandbox_url: str, api_key: str, timeout_s: float = 600) -> dict[str, int]:
    """The account's delivery counts once none is pending, or as they stand at the deadline.

    A busy machine slows the sandbox's deliveries (and its answers while it sends them): this waits
    on what it says, not on a clock, within a deadline only a stuck sandbox reaches. The sandbox
    shows an account its own deliveries, so the key names the account like any API request.
    """
    deadline = time.monotonic() + timeout_s
    headers = {"Authorization": f"Token {api_key}"}
    # One client for every poll: a new one per poll builds a TLS context (15-40 ms of CPU each).
    with httpx.Client(headers=headers, timeout=30) as client:
        while True:
            try:
                stats: dict[str, int] = client.get(f"{sandbox_url}/_admin/deliveries").json()
            except httpx.TimeoutException:
                if time.monotonic() > deadline:
                    raise
                continue
            if stats["pending"] == 0 or time.monotonic() > deadline:
                return stats
            time.sleep(0.2)
