"""One plain HTTP client for tests that call a server directly.

`httpx.get()` and the like build a client, and with it a TLS context (15-40 ms of CPU), on every
call; a test that sends hundreds of requests paid seconds for it. No keep-alive, so that no
connection is left open when a test's server stops (it would wait for it).
"""

from __future__ import annotations

import httpx

HTTP = httpx.Client(limits=httpx.Limits(max_keepalive_connections=0))
