"""The service client: transport, rate limiting, retries, JSON:API parsing and resource families.

Public surface: `AsyncShipsyncClient`, `run_with_client` (one operation from synchronous code), the typed models in
`shipsync.api.models`, and `ClientStats`. No httpx exception escapes this package.
"""

from shipsync.api.client import AsyncShipsyncClient, run_with_client
from shipsync.api.transport import ClientStats

__all__ = ["AsyncShipsyncClient", "ClientStats", "run_with_client"]
