"""The service client: transport, rate limiting, retries, JSON:API parsing and resource families.

Public surface: `AsyncShipsyncClient`, `ShipsyncClient` (synchronous facade), the typed models in
`shipsync.api.models`, and `ClientStats`. No httpx exception escapes this package.
"""

from shipsync.api.client import AsyncShipsyncClient, ShipsyncClient
from shipsync.api.transport import ClientStats

__all__ = ["AsyncShipsyncClient", "ClientStats", "ShipsyncClient"]
