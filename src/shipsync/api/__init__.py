"""The service client: transport, rate limiting, retries, JSON:API parsing and resource families.

Public surface: `AsyncShipsyncClient` and `ClientOptions` (plain values it is made of), `run_with_client`
(one operation from synchronous code), the typed models in `shipsync.api.models`, and `ClientStats`.
No httpx exception escapes this package, and it imports nothing of the project but `errors`.
"""

from shipsync.api.client import AsyncShipsyncClient, ClientOptions, run_with_client
from shipsync.api.transport import ClientStats

__all__ = ["AsyncShipsyncClient", "ClientOptions", "ClientStats", "run_with_client"]
