"""A faithful local stand-in of the service: seeded data, accounts, rate limit, faults, webhooks.

`create_app(SandboxOptions(...))` gives the ASGI app; `shipsync sandbox serve` runs it on uvicorn.
"""

from shipsync_sandbox.app import SandboxApp, create_app
from shipsync_sandbox.state import DEFAULT_API_KEYS, SandboxOptions

__all__ = ["DEFAULT_API_KEYS", "SandboxApp", "SandboxOptions", "create_app"]
