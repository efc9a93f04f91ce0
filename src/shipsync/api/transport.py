"""HTTP transport: auth header, bounded concurrency, the shared limiter, retries and error mapping.

Every request goes through `Transport.request`. httpx exceptions are converted here and never
escape. Nothing here puts a header value (the API key) into a message or a log line.

The transport follows only the service: every URL it is asked for, a `links.next` the service
sent included, must be on the configured scheme, host and port, under the base path, with no
user-info of its own, or it is refused before anything is sent (`OutsideServiceError`): the
`Authorization` header never reaches another place. Redirects are never followed. A listing's
walk stops on a `links.next` it followed before or past its page cap (`ListingWalk`), and a
response is read as a stream and refused past its size limit (`ResponseTooLargeError`), so no
answer can make a run page forever or hold more than that limit.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import random
import ssl
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

import httpx

from shipsync.api.clock import Clock, MonotonicClock
from shipsync.api.jsonapi import DEFAULT_MAX_LISTING_PAGES, ListingWalk, Page, Pages, parse_errors, parse_page
from shipsync.api.ratelimit import RequestLimiter, UnlimitedLimiter
from shipsync.api.retry import IDEMPOTENT_METHODS, Failure, RetryPolicy, is_retryable, parse_retry_after, retry_wait
from shipsync.errors import ApiError, ApiNetworkError, OutcomeUnknownError, OutsideServiceError, ResponseTooLargeError, error_for_status
from shipsync.json_text import read_body

log = logging.getLogger("shipsync.api")

MAX_PAGE_SIZE = 100
USER_AGENT = "shipsync/0.1"
# The largest response read unless the settings say otherwise (SHIPSYNC_MAX_RESPONSE_MB): a page of
# 100 documents with everything they include is a few megabytes.
DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024
_URL_SHOWN = 200  # characters of a refused URL in an error message


@dataclass
class ClientStats:
    """Counters for the run ledger: requests sent, 429s received, retries made."""

    requests: int = 0
    throttled: int = 0
    retries: int = 0
    status_counts: dict[int, int] = field(default_factory=dict)

    def count(self, status: int) -> None:
        self.requests += 1
        self.status_counts[status] = self.status_counts.get(status, 0) + 1


@functools.cache
def tls_context() -> ssl.SSLContext:
    """One TLS context for every client of the process: httpx builds one per client otherwise, and
    loading the CA bundle into it costs more CPU than many requests do, also for plain-HTTP URLs."""
    return httpx.create_ssl_context()


def _short_path(url: httpx.URL | str) -> str:
    parsed = httpx.URL(str(url))
    return parsed.raw_path.decode("ascii", "replace")


@dataclass(frozen=True)
class Received:
    """A response as read: its status, headers and body (whole, within the size limit)."""

    status_code: int
    headers: httpx.Headers
    content: bytes


def _shown(url: httpx.URL) -> str:
    """A URL for an error message: no user-info, no query (either may carry a credential)."""
    text = f"{url.scheme}://{url.host}{f':{url.port}' if url.port else ''}{url.path}"
    return text if len(text) <= _URL_SHOWN else text[:_URL_SHOWN] + "..."


def _segments(url: httpx.URL) -> list[str]:
    """The path's segments as a server reads them (`%2e%2e` is `..`; a `%2F` stays inside its segment)."""
    return [unquote(segment) for segment in url.raw_path.split(b"?", 1)[0].decode("ascii", "replace").split("/")]


class Transport:
    """Sends requests for one API key; share one per process and key."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        limiter: RequestLimiter | None = None,
        policy: RetryPolicy | None = None,
        connect_timeout: float = 10.0,
        read_timeout: float = 30.0,
        concurrency: int = 8,
        http_transport: httpx.AsyncBaseTransport | None = None,
        clock: Clock | None = None,
        rng: random.Random | None = None,
        max_listing_pages: int = DEFAULT_MAX_LISTING_PAGES,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.base = httpx.URL(self.base_url + "/")
        self.max_listing_pages = max_listing_pages
        self.max_response_bytes = max_response_bytes
        self.limiter = limiter or UnlimitedLimiter()
        self.policy = policy or RetryPolicy()
        self.clock = clock or MonotonicClock()
        self.rng = rng or random.Random()
        self.stats = ClientStats()
        self._semaphore = asyncio.Semaphore(concurrency)
        self._client = httpx.AsyncClient(
            base_url=self.base_url + "/",
            headers={
                "Authorization": f"Token {api_key}",
                "Accept": "application/vnd.api+json, application/json",
                "User-Agent": USER_AGENT,
            },
            timeout=httpx.Timeout(read_timeout, connect=connect_timeout),
            limits=httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency),
            transport=http_transport,
            follow_redirects=False,
            verify=tls_context(),
        )

    def __repr__(self) -> str:
        return f"Transport(base_url={self.base_url!r})"

    async def aclose(self) -> None:
        await self._client.aclose()

    def _url(self, path_or_url: str) -> str:
        if path_or_url.startswith(("http://", "https://")):
            return path_or_url
        return path_or_url.lstrip("/")

    def _within_service(self, method: str, url: str, params: dict[str, Any] | None) -> None:
        """Refuse, before anything is sent, a request that would leave the service: another scheme,
        host or port, user-info of its own, or a path outside the base path (`..` included)."""
        try:
            target = self._client.build_request(method, url, params=params).url
        except httpx.InvalidURL as exc:
            raise OutsideServiceError(f"not a URL the service could have sent ({exc}): not requested", method=method) from None
        base = self.base
        base_path = base.raw_path.decode("ascii", "replace")
        path = target.raw_path.split(b"?", 1)[0].decode("ascii", "replace")
        same_place = (target.scheme, target.host, target.port) == (base.scheme, base.host, base.port) and not target.userinfo
        under_base = (path.startswith(base_path) or path == base_path.rstrip("/")) and ".." not in _segments(target)
        if not (same_place and under_base):
            raise OutsideServiceError(
                f"{_shown(target)} is outside the service ({_shown(base)}): not requested, the API key not sent "
                "(a link the service sent must stay on its scheme, host and port, under its path)",
                method=method,
            )

    async def request(
        self,
        method: str,
        path_or_url: str,
        *,
        params: dict[str, Any] | None = None,
        json_body: Any = None,
    ) -> Any:
        """Send with limiting and retries; return the parsed JSON body (None when empty)."""
        response, method, display = await self._respond(method, path_or_url, params, json_body)
        content = self._content(response, method, display)
        if content is None:
            return None
        try:
            return read_body(content)
        except (ValueError, RecursionError):
            raise ApiNetworkError(
                f"unreadable JSON body (status {response.status_code})",
                status=response.status_code,
                method=method,
                path=display,
            ) from None

    async def _respond(self, method: str, path_or_url: str, params: dict[str, Any] | None, json_body: Any) -> tuple[Received, str, str]:
        """The successful response to a request (after limiting and retries), the method as sent and
        the path as errors name it; a failure after every retry is raised."""
        method = method.upper()
        url = self._url(path_or_url)
        self._within_service(method, url, params)
        display = "/" + url.split("://", 1)[-1].split("/", 1)[-1] if "://" in url else "/" + url
        attempt = 0
        while True:
            attempt += 1
            failure, response, cause = await self._attempt(method, url, display, params, json_body)
            status = response.status_code if response is not None else None
            retry_after: float | None = None
            if response is not None and status == 429:
                self.stats.throttled += 1
                retry_after = parse_retry_after(response.headers.get("Retry-After"))
                self.limiter.pause_until_after(retry_wait(attempt, self.policy, retry_after, self.rng))
            if failure is None and response is not None:
                return response, method, display
            assert failure is not None
            if attempt <= self.policy.max_retries and is_retryable(method, failure, status):
                self.stats.retries += 1
                if status != 429:  # a 429 already paused the whole key
                    await self.clock.sleep(retry_wait(attempt, self.policy, None, self.rng))
                log.debug("retry %d of %s %s after %s", attempt, method, display, status or failure.value)
                continue
            raise self._final_error(method, display, failure, response, cause)

    async def _attempt(
        self, method: str, url: str, display: str, params: dict[str, Any] | None, json_body: Any
    ) -> tuple[Failure | None, Received | None, str | None]:
        async with self._semaphore:
            await self.limiter.acquire()
            started = time.perf_counter()
            try:
                request = self._client.build_request(method, url, params=params, json=json_body)
                response = await self._client.send(request, stream=True)
                try:
                    received = Received(response.status_code, response.headers, await self._read(response, method, display))
                finally:
                    await response.aclose()
            except (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout) as exc:
                return Failure.NOT_SENT, None, type(exc).__name__
            except httpx.TimeoutException as exc:
                return Failure.LOST, None, type(exc).__name__
            except httpx.HTTPError as exc:
                return Failure.LOST, None, type(exc).__name__
            finally:
                self.limiter.release()
        self.stats.count(received.status_code)
        if log.isEnabledFor(logging.DEBUG):  # formatting the URL costs more than the parse of a page
            elapsed_ms = (time.perf_counter() - started) * 1000
            log.debug("%s %s -> %d in %.1f ms", method, _short_path(request.url), received.status_code, elapsed_ms)
        if received.status_code >= 400:
            return Failure.STATUS, received, None
        return None, received, None

    async def _read(self, response: httpx.Response, method: str, display: str) -> bytes:
        """The body of a streamed response, as decoded, refused once it passes the size limit (a
        declared length past it: before a byte is read), so a huge answer is never held whole."""
        limit = self.max_response_bytes
        declared = response.headers.get("content-length", "")
        chunks: list[bytes] = []
        size = int(declared) if declared.isdigit() and "content-encoding" not in response.headers else 0
        if size <= limit:
            size = 0
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > limit:
                    break
                chunks.append(chunk)
        if size > limit:
            raise ResponseTooLargeError(
                f"the response is larger than {limit:,} bytes (SHIPSYNC_MAX_RESPONSE_MB): refused while reading",
                status=response.status_code,
                method=method,
                path=display,
            )
        return b"".join(chunks)

    def _content(self, response: Received, method: str, path: str) -> bytes | None:
        """A successful response's JSON body as sent (None when empty); another content type raises."""
        if not response.content or response.status_code == 204:
            return None
        content_type = response.headers.get("content-type", "")
        if "json" not in content_type:
            raise ApiNetworkError(
                f"unexpected content type {content_type.split(';')[0] or 'none'!r} (status {response.status_code})",
                status=response.status_code,
                method=method,
                path=path,
            )
        return response.content

    def _final_error(
        self,
        method: str,
        path: str,
        failure: Failure,
        response: Received | None,
        cause: str | None,
    ) -> ApiError:
        writes = method not in IDEMPOTENT_METHODS
        if response is None:
            if writes and failure is Failure.LOST:
                return OutcomeUnknownError(
                    f"connection lost after sending ({cause}); the service may or may not have acted",
                    method=method,
                    path=path,
                )
            return ApiNetworkError(f"network failure ({cause}) after retries", method=method, path=path)
        status = response.status_code
        try:
            body = json.loads(response.content) if response.content else None
        except (ValueError, RecursionError):
            body = None
        error = error_for_status(status, parse_errors(body), method, path)
        if writes and status >= 500:
            return OutcomeUnknownError(
                f"service answered {status} to a write; the service may or may not have acted",
                status=status,
                method=method,
                path=path,
                errors=error.errors,
            )
        return error

    async def get_page(self, path_or_url: str, params: dict[str, Any] | None = None) -> Page:
        body = await self.request("GET", path_or_url, params=params)
        try:
            return parse_page(body)
        except ValueError as exc:
            raise ApiNetworkError(f"malformed response: {exc}", method="GET", path=path_or_url) from None

    async def paginate(
        self,
        path: str,
        params: dict[str, Any] | None = None,
        *,
        page_size: int | None = MAX_PAGE_SIZE,
        max_pages: int | None = None,
        start: str | None = None,
    ) -> Pages:
        """Yield pages, following `links.next` until absent or `max_pages` is reached.

        `page_size` is sent as `page[size]`; None for a listing whose operation declares no paging
        (the reference: a parameter it does not declare is not sent). `start` is a `links.next`
        cursor from an earlier read: paging resumes there, and `path` and `params` are not sent
        again (the link carries the listing's query). A `links.next` that repeats, or a listing
        past the transport's page cap, raises `RunawayListingError`; one outside the service,
        `OutsideServiceError` (see the module's docstring).
        """
        walk = ListingWalk(path, self.max_listing_pages)
        if start is None:
            query = dict(params or {})
            if page_size is not None:
                query.setdefault("page[size]", min(page_size, MAX_PAGE_SIZE))
            page = await self.get_page(path, query)
        else:
            page = await self.get_page(walk.follow(start))
        walk.read()
        yield page
        seen = 1
        while (link := page.next_link) and (max_pages is None or seen < max_pages):
            page = await self.get_page(walk.follow(link))
            walk.read()
            seen += 1
            yield page

    async def write_one(self, method: str, path: str, body: Any) -> dict[str, Any]:
        """POST/PATCH a document and return the one resource the service answered with.

        A 2xx answer means the write happened, whatever its body. When the body names no resource
        (empty, unreadable, no `data`), a PATCH's outcome is what was sent, so that is returned; a
        create's new id is then unknown, which is `OutcomeUnknownError` (a later read finds it).
        """
        page = await self.write(method, path, body)
        if page is not None and page.data:
            return page.data[0]
        sent = body.get("data") if isinstance(body, dict) else None
        if method == "PATCH" and isinstance(sent, dict):
            return {"id": sent.get("id") or path.rstrip("/").rsplit("/", 1)[-1], **sent}
        raise OutcomeUnknownError(
            "the service accepted the write but its answer names no resource; the next read finds it",
            method=method,
            path=path,
        )

    async def write(self, method: str, path: str, body: Any) -> Page | None:
        """POST/PATCH/DELETE a document; return the parsed answer (None when empty)."""
        try:
            answer = await self.request(method, path, json_body=body)
        except ApiNetworkError as exc:
            if exc.status is None or not 200 <= exc.status < 300:
                raise
            answer = None  # a 2xx whose body could not be read: the write happened
        if answer is None:
            return None
        try:
            return parse_page(answer)
        except ValueError:
            # The write was accepted (2xx); only its answer is odd. Never report it as failed.
            log.warning("%s %s: the service accepted the write but its answer is not a JSON:API document", method, path)
            return None
