"""The shipsync error tree: every failure a caller can catch, in one place.

    ShipsyncError
    ├── ConfigError                 a setting is missing or malformed (names the variable)
    ├── InputError                  a user file is unreadable or invalid (names file, row, column)
    ├── WarehouseError              the lake cannot be opened, read or written
    │   ├── WarehouseBusyError      other writers kept committing until a run's deadline
    │   └── ValueRefusedError       a value does not fit the type a cast gives it
    └── ApiError                    the service (or the way to it) failed a request
        ├── AuthenticationError     401
        ├── PermissionDeniedError   403
        ├── NotFoundError           404
        ├── ValidationError         400 / 422, with each error's detail and source.pointer
        ├── RateLimitedError        429, still after retries
        ├── UpstreamError           5xx
        ├── ApiNetworkError         timeouts, connection failures, unreadable bodies
        ├── OutcomeUnknownError     a POST/PATCH/DELETE was sent, but whether the service acted
        │                           on it cannot be known (connection lost, 5xx, timeout)
        ├── OutsideServiceError     a link (`links.next`) names a place outside the service: not
        │                           requested, the API key never sent there
        ├── RunawayListingError     a listing repeats a page or runs past its page cap
        └── ResponseTooLargeError   a response past the size limit, refused while reading

Messages never contain an API key or a webhook secret: the transport never puts headers in
messages, and `redact` is applied to anything derived from user configuration.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from shipsync.redaction import redact


class ShipsyncError(Exception):
    """Base of every error shipsync raises on purpose."""


class ConfigError(ShipsyncError):
    """A setting is missing or malformed."""


class InputError(ShipsyncError):
    """A user-supplied file or value cannot be used."""


class WarehouseError(ShipsyncError):
    """The warehouse cannot be opened, read or written."""


class WarehouseBusyError(WarehouseError):
    """A run's commit kept losing races with other writers until its deadline (names them)."""


class ValueRefusedError(WarehouseError):
    """A value does not fit the type a cast to a table's column gives it (DuckDB refused it)."""


@dataclass(frozen=True)
class ErrorItem:
    """One member of a JSON:API `errors` array."""

    title: str | None = None
    detail: str | None = None
    pointer: str | None = None
    parameter: str | None = None
    code: str | None = None
    status: str | None = None

    def describe(self) -> str:
        where = f" at {self.pointer}" if self.pointer else ""
        return f"{self.detail or self.title or 'error'}{where}"


class ApiError(ShipsyncError):
    """A request to the service failed."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        method: str | None = None,
        path: str | None = None,
        errors: tuple[ErrorItem, ...] = (),
    ) -> None:
        self.status = status
        self.method = method
        self.path = path
        self.errors = errors
        where = f"{method} {path}: " if method and path else ""
        super().__init__(f"{where}{message}")


class AuthenticationError(ApiError):
    """401: the API key is missing or wrong."""


class PermissionDeniedError(ApiError):
    """403: the key may not do this."""


class NotFoundError(ApiError):
    """404: the addressed resource does not exist (for this account)."""


class ValidationError(ApiError):
    """400/422: the service refused the values; `errors` carries detail and pointer of each."""


class RateLimitedError(ApiError):
    """429 after every allowed retry."""


class UpstreamError(ApiError):
    """5xx from the service."""


class ApiNetworkError(ApiError):
    """Timeout, connection failure, or a body that cannot be read as JSON:API."""


class OutcomeUnknownError(ApiError):
    """A write was sent but its outcome cannot be known; never resent blindly."""


class OutsideServiceError(ApiError):
    """A URL the service named (a `links.next`) is not under the configured service's scheme,
    host, port and base path: it is never requested, so the API key never goes there."""


class RunawayListingError(ApiError):
    """A listing whose `links.next` repeats a page, or that runs past its page cap."""


class ResponseTooLargeError(ApiError):
    """A response larger than the configured maximum, refused while it was being read."""


def error_for_status(status: int, errors: tuple[ErrorItem, ...], method: str, path: str) -> ApiError:
    """The one switch from an HTTP status to an error class."""
    summary = "; ".join(item.describe() for item in errors) or f"HTTP {status}"
    summary = redact(summary)
    kwargs: dict[str, Any] = {"status": status, "method": method, "path": path, "errors": errors}
    if status == 401:
        return AuthenticationError(f"authentication failed (check SHIPSYNC_API_KEY): {summary}", **kwargs)
    if status == 403:
        return PermissionDeniedError(f"permission denied: {summary}", **kwargs)
    if status == 404:
        return NotFoundError(f"not found: {summary}", **kwargs)
    if status in (400, 422):
        return ValidationError(f"rejected: {summary}", **kwargs)
    if status == 429:
        return RateLimitedError(f"rate limited: {summary}", **kwargs)
    if status >= 500:
        return UpstreamError(f"service error {status}: {summary}", **kwargs)
    return ApiError(f"unexpected status {status}: {summary}", **kwargs)
