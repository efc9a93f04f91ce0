"""The receiver's limits, each with a default and a `webhooks serve` flag.

The service sends small bodies (a few KB) with a handful of headers, on a few connections at a
time; anything far beyond that is a fault or an attack, and must cost the receiver little.
"""

from __future__ import annotations

from dataclasses import dataclass

from shipsync.errors import ConfigError
from shipsync.webhooks.body_limits import MAX_BODY_BYTES


@dataclass(frozen=True)
class ReceiverLimits:
    max_body: int = MAX_BODY_BYTES  # bytes of one body (413 beyond)
    body_timeout_s: float = 10.0  # from the end of the headers to the end of the body (408)
    header_timeout_s: float = 10.0  # from a request's first byte to the end of its headers (408)
    idle_timeout_s: float = 5.0  # a connection with no request under way is closed after this
    max_header_bytes: int = 16 * 1024  # bytes of request line and headers (431 beyond)
    max_headers: int = 100  # header fields of one request (431 beyond)
    # Open connections, in all and from one peer (address). Past either, a new connection closes
    # the one that has waited longest for its next request to be all in (idle, or its head or body
    # still arriving: `http_limits`), so idle or slow connections cannot lock deliveries out; 503
    # when every connection is being served.
    max_connections: int = 1000
    max_connections_per_peer: int = 100

    def __post_init__(self) -> None:
        for name, value in vars(self).items():
            if value <= 0:
                raise ConfigError(f"receiver limit {name} must be positive, not {value}")
