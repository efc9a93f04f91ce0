"""HTTP transport: auth header, bounded concurrency, the shared limiter, retries and error mapping.

Every request goes through `Transport.request`. httpx exceptions are converted here and never
escape. Nothing here puts a header value (the API key) into a message or a log line.
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

import httpx

from shipsync.api.clock import Clock, MonotonicClock
from shipsync.api.jsonapi import Page, Pages, RawPage, parse_errors, parse_page, read_page_head
from shipsync.api.ratelimit import RequestLimiter, UnlimitedLimiter
from shipsync.api.retry import IDEMPOTENT_METHODS, Failure, RetryPolicy, is_retryable, parse_retry_after, retry_wait
from shipsync.errors import ApiError, ApiNetworkError, OutcomeUnknownError, error_for_status
from shipsync.json_text import read_body

log = logging.getLogger("shipsync.api")

MAX_PAGE_SIZE = 100
USER_AGENT = "shipsync/0.1"


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
    loading the CA bundle into it costs 15-40 ms of CPU each time, also for plain-HTTP URLs."""
    return httpx.create_ssl_context()


def _short_path(url: httpx.URL | str) -> str:
    parsed = httpx.URL(str(url))
    return parsed.raw_path.decode("ascii", "replace")


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
    ) -> None:
        self.base_url = base_url.rstrip("/")
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

    async def _respond(
        self, method: str, path_or_url: str, params: dict[str, Any] | None, json_body: Any
    ) -> tuple[httpx.Response, str, str]:
        """The successful response to a request (after limiting and retries), the method as sent and
        the path as errors name it; a failure after every retry is raised."""
        method = method.upper()
        url = self._url(path_or_url)
        display = "/" + url.split("://", 1)[-1].split("/", 1)[-1] if "://" in url else "/" + url
        attempt = 0
        while True:
            attempt += 1
            failure, response, cause = await self._attempt(method, url, params, json_body)
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
        self, method: str, url: str, params: dict[str, Any] | None, json_body: Any
    ) -> tuple[Failure | None, httpx.Response | None, str | None]:
        async with self._semaphore:
            await self.limiter.acquire()
            started = time.perf_counter()
            try:
                response = await self._client.request(method, url, params=params, json=json_body)
            except (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout) as exc:
                return Failure.NOT_SENT, None, type(exc).__name__
            except httpx.TimeoutException as exc:
                return Failure.LOST, None, type(exc).__name__
            except httpx.HTTPError as exc:
                return Failure.LOST, None, type(exc).__name__
            finally:
                self.limiter.release()
        self.stats.count(response.status_code)
        if log.isEnabledFor(logging.DEBUG):  # formatting the URL costs more than the parse of a page
            elapsed_ms = (time.perf_counter() - started) * 1000
            log.debug("%s %s -> %d in %.1f ms", method, _short_path(response.request.url), response.status_code, elapsed_ms)
        if response.status_code >= 400:
            return Failure.STATUS, response, None
        return None, response, None

    def _content(self, response: httpx.Response, method: str, path: str) -> bytes | None:
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
        response: httpx.Response | None,
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

    async def get_raw_page(self, path_or_url: str, params: dict[str, Any] | None = None) -> RawPage:
        """`get_page`, its included resources left unread in the page's body (see `RawPage`)."""
        response, method, display = await self._respond("GET", path_or_url, params, None)
        try:
            return read_page_head(self._content(response, method, display) or b"null")
        except (ValueError, RecursionError) as exc:
            raise ApiNetworkError(f"malformed response: {exc}", method="GET", path=path_or_url) from None

    async def paginate(
        self,
        path: str,
        params: dict[str, Any] | None = None,
        *,
        page_size: int | None = MAX_PAGE_SIZE,
        max_pages: int | None = None,
        start: str | None = None,
        raw: bool = False,
    ) -> Pages:
        """Yield pages, following `links.next` until absent or `max_pages` is reached.

        `page_size` is sent as `page[size]`; None for a listing whose operation declares no paging
        (the reference: a parameter it does not declare is not sent). `start` is a `links.next`
        cursor from an earlier read: paging resumes there, and `path` and `params` are not sent
        again (the link carries the listing's query). `raw`: `RawPage`s, their included resources
        left unread.
        """
        get = self.get_raw_page if raw else self.get_page
        if start is None:
            query = dict(params or {})
            if page_size is not None:
                query.setdefault("page[size]", min(page_size, MAX_PAGE_SIZE))
            page = await get(path, query)
        else:
            page = await get(start)
        yield page
        seen = 1
        while (link := page.next_link) and (max_pages is None or seen < max_pages):
            page = await get(link)
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
