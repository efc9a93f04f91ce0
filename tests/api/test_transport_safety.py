"""The transport follows only the service (issue 36, item 3): a `links.next` (or any URL) off the
configured scheme, host, port or base path is refused before anything is sent, so the API key
never reaches a second server that records every request; a listing whose `links.next` repeats,
or that never ends, stops at once or at its page cap; a response past the size limit is refused
while it is read, without holding it. The service here is the sandbox behind a proxy that
rewrites `links.next` as a hostile or broken service would; every server is real, on loopback."""

from __future__ import annotations

import asyncio
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import aclosing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from starlette.types import Receive, Scope, Send
from typer.testing import CliRunner

from shipsync.api.transport import Transport
from shipsync.cli import app
from shipsync.errors import OutsideServiceError, ResponseTooLargeError, RunawayListingError
from shipsync.pull.steps import BatchOutcome, no_progress, page_through, run_direct
from shipsync.warehouse.ledger import RunRecord
from shipsync_sandbox.serving import BackgroundServer
from support.sandboxes import K1, RunningSandbox, SandboxFactory, shipsync_env

Rewrite = Callable[[int, str], str | None]  # (page number read, the sandbox's next link) -> links.next sent


@dataclass
class Recorded:
    """A server's log of what reached it: each request's path and whether it carried the key."""

    requests: list[tuple[str, bool]] = field(default_factory=list)

    def note(self, scope: Scope) -> None:
        headers = dict(scope["headers"])
        self.requests.append((scope["path"], headers.get(b"authorization", b"").endswith(K1.encode())))


async def _answer(send: Send, status: int, body: bytes) -> None:
    headers = [(b"content-type", b"application/vnd.api+json"), (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class Recorder(Recorded):
    """A second server, where no request of the client's should ever arrive."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        self.note(scope)
        await _answer(send, 200, b'{"data": [], "links": {}}')


class HostileService(Recorded):
    """The sandbox's listings with `links.next` rewritten by `rewrite`; every request recorded."""

    def __init__(self, sandbox: RunningSandbox, rewrite: Rewrite) -> None:
        super().__init__()
        self.sandbox, self.rewrite = sandbox, rewrite
        self.client = httpx.AsyncClient(timeout=60)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        self.note(scope)
        query = scope["query_string"].decode()
        headers = {"Authorization": dict(scope["headers"]).get(b"authorization", b"").decode()}
        answer = await self.client.get(f"{self.sandbox.server.url}{scope['path']}?{query}", headers=headers)
        body = answer.json()
        page = int(httpx.QueryParams(query).get("page[number]", "1"))
        body.setdefault("links", {})["next"] = self.rewrite(page, (body.get("links") or {}).get("next") or "")
        await _answer(send, answer.status_code, orjson.dumps(body))


@dataclass
class Servers:
    service: HostileService
    service_url: str
    recorder: Recorder
    recorder_url: str
    port: int  # the service's


@pytest.fixture
def hostile(make_sandbox: SandboxFactory) -> Iterator[Callable[[Rewrite], Servers]]:
    started: list[BackgroundServer] = []
    sandbox = make_sandbox(documents=30)

    def start(rewrite: Rewrite, *, recorder_host: str = "127.0.0.1") -> Servers:
        service = HostileService(sandbox, rewrite)
        front = BackgroundServer(service).start()
        recorder = Recorder()
        # On another host, the recorder listens on the service's own port: only the host differs.
        behind = BackgroundServer(recorder, host=recorder_host, port=front.port if recorder_host != "127.0.0.1" else 0).start()
        started.extend([front, behind])
        return Servers(service, f"{front.url}/v2", recorder, behind.url, front.port)

    yield start
    for server in started:
        server.stop()


async def _walk(transport: Transport, path: str = "documents", **options: Any) -> list[str]:
    ids: list[str] = []
    try:
        async with aclosing(transport.paginate(path, page_size=5, **options)) as pages:
            async for page in pages:
                ids += [r["id"] for r in page.data]
    finally:
        await transport.aclose()
    return ids


def _page(servers_port: int, number: int) -> str:
    return f"http://127.0.0.1:{servers_port}/v2/documents?page[number]={number}&page[size]=5"


# Each link the service may send that leaves it, from its port (and the recorder's).
OUTSIDE: dict[str, Callable[[int, int], str]] = {
    "another host, same port": lambda port, _: f"http://127.0.0.2:{port}/v2/documents?page[number]=2&page[size]=5",
    "another port": lambda _, recorder: f"http://127.0.0.1:{recorder}/v2/documents?page[number]=2&page[size]=5",
    "outside the base path": lambda port, _: f"http://127.0.0.1:{port}/admin/documents?page[number]=2",
    "dot segments out of the base path": lambda port, _: f"http://127.0.0.1:{port}/v2/%2e%2e/admin?page[number]=2",
    "user-info of its own": lambda port, _: f"http://someone:pw@127.0.0.1:{port}/v2/documents?page[number]=2&page[size]=5",
    "a scheme in capitals to another port": lambda _, recorder: f"HTTP://127.0.0.1:{recorder}/v2/documents?page[number]=2",
}


@pytest.mark.parametrize("where", OUTSIDE)
def test_a_next_link_outside_the_service_is_refused_and_the_key_never_sent(hostile: Callable[..., Servers], where: str) -> None:
    # `servers` is bound before the first request, when the service first calls this.
    servers = hostile(
        lambda page, _: OUTSIDE[where](servers.port, int(servers.recorder_url.rsplit(":", 1)[1])),
        recorder_host="127.0.0.2" if where.startswith("another host") else "127.0.0.1",
    )
    with pytest.raises(OutsideServiceError, match=r"outside the service .* not requested, the API key not sent"):
        asyncio.run(_walk(Transport(servers.service_url, K1)))
    assert servers.recorder.requests == []
    assert servers.service.requests == [("/v2/documents", True)]  # the first page only


def test_plain_http_where_the_base_is_https_is_refused(hostile: Callable[..., Servers]) -> None:
    servers = hostile(lambda page, link: link)
    plain = servers.recorder_url.replace("http://", "")
    # A cursor from an earlier read, on http while the service is https: the recorder would get the key.
    with pytest.raises(OutsideServiceError, match="outside the service"):
        asyncio.run(_walk(Transport(f"https://{plain}/v2", K1), start=f"http://{plain}/v2/documents?page[number]=2"))
    assert servers.recorder.requests == []


def test_next_links_under_the_service_are_followed(hostile: Callable[..., Servers]) -> None:
    """The control: the same walk, links rewritten to the service's own place, reads every page."""
    servers = hostile(lambda page, _: _page(servers.port, page + 1) if page < 6 else None)
    assert len(asyncio.run(_walk(Transport(servers.service_url, K1)))) == 30
    assert servers.service.requests == [("/v2/documents", True)] * 6 and servers.recorder.requests == []


def test_a_pull_whose_listing_leaves_the_service_fails_in_one_line(hostile: Callable[..., Servers], tmp_path: Path) -> None:
    servers = hostile(lambda page, _: f"http://127.0.0.2:{servers.port}/v2/documents?page[number]=2", recorder_host="127.0.0.2")
    env = shipsync_env(servers.service_url, tmp_path / "warehouse", K1)
    done = CliRunner().invoke(app, ["pull", "documents", "--all"], env={**env, "COLUMNS": "300"})
    assert done.exit_code == 1, done.output
    errors = [line for line in done.output.splitlines() if line.strip()]
    assert len(errors) == 1 and errors[0].startswith("error: ") and "outside the service" in errors[0], done.output
    assert servers.recorder.requests == []


# Past this many requests the hostile service ends its listing after all: a walk that never stops
# would otherwise hang the test instead of failing it.
GIVES_UP_AFTER = 100


def test_a_next_link_that_repeats_stops_the_listing(hostile: Callable[..., Servers]) -> None:
    # Page 2 links to itself (until the service gives up).
    servers = hostile(lambda page, _: _page(servers.port, 2) if len(servers.service.requests) < GIVES_UP_AFTER else None)
    with pytest.raises(RunawayListingError, match="repeats a page"):
        asyncio.run(_walk(Transport(servers.service_url, K1)))
    assert len(servers.service.requests) == 2


def test_a_listing_that_never_ends_stops_at_its_cap(hostile: Callable[..., Servers]) -> None:
    servers = hostile(lambda page, _: _page(servers.port, page + 1) if page < GIVES_UP_AFTER else None)  # always one more
    with pytest.raises(RunawayListingError, match="runs past 20 pages"):
        asyncio.run(_walk(Transport(servers.service_url, K1, max_listing_pages=20)))
    assert len(servers.service.requests) == 20


def _batches(cursors: Callable[[str | None], str | None], pages: int, cap: int) -> Callable[[str | None], BatchOutcome]:
    def batch(cursor: str | None) -> BatchOutcome:
        return BatchOutcome(fetched=1, next_link=cursors(cursor), pages=pages, max_listing_pages=cap)

    return batch


def test_a_listing_walked_in_batches_stops_on_a_repeated_cursor_or_at_its_cap() -> None:
    """A pull walks a long listing in batches (each a step of its own, with a client of its own):
    the walk across them stops too, where no one batch sees the whole listing."""
    record = RunRecord(run_id="r", flow="pull_documents", parameters={})
    cycle = iter(["c1", "c2", "c3", "c1", "c2", None])  # batch boundaries coming round again (then an end)
    with pytest.raises(RunawayListingError, match="repeats a page"):
        page_through(record, run_direct, no_progress, "documents-pages", _batches(lambda _: next(cycle), 50, 10**6))
    counted: list[str] = []

    def endless(cursor: str | None) -> str | None:  # ends after 10 batches, so that a walk without a cap ends too
        counted.append(f"c{len(counted)}")
        return counted[-1] if len(counted) < 10 else None

    with pytest.raises(RunawayListingError, match="runs past 120 pages"):
        page_through(record, run_direct, no_progress, "documents-pages", _batches(endless, 50, 120))
    assert len(counted) == 3  # 150 pages read when the third batch's cursor is refused


class Huge:
    """A service answering every request with a body of `size` bytes, streamed in 1 MiB chunks
    (its length declared or not)."""

    CHUNK = 1024 * 1024

    def __init__(self, size: int, *, declared: bool) -> None:
        self.size, self.declared, self.sent = size, declared, 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        headers = [(b"content-type", b"application/json")]
        if self.declared:
            headers.append((b"content-length", b"%d" % self.size))
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        filler = b'{"data": [], "links": {}, "meta": {"x": "' + b"x" * (self.CHUNK - 40)
        while self.sent + len(filler) < self.size:
            await send({"type": "http.response.body", "body": filler, "more_body": True})
            self.sent += len(filler)
            filler = b"x" * self.CHUNK
        await send({"type": "http.response.body", "body": b"x" * (self.size - self.sent - 3) + b'"}}', "more_body": False})


@pytest.mark.parametrize("declared", [False, True], ids=["streamed", "declared"])
def test_a_response_past_the_limit_is_refused_without_holding_it(declared: bool) -> None:
    huge = Huge(400 * 1024 * 1024, declared=declared)
    with BackgroundServer(huge) as server:
        transport = Transport(f"{server.url}/v2", K1, max_response_bytes=4 * 1024 * 1024)
        tracemalloc.start()
        try:
            with pytest.raises(ResponseTooLargeError, match="larger than 4,194,304 bytes"):
                asyncio.run(_walk(transport))
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert peak < 40 * 1024 * 1024, f"{peak:,} bytes held"


def test_a_response_within_the_limit_is_read_whole() -> None:
    huge = Huge(3 * 1024 * 1024, declared=False)
    with BackgroundServer(huge) as server:
        page = asyncio.run(_first_page(Transport(f"{server.url}/v2", K1, max_response_bytes=4 * 1024 * 1024)))
    assert len(page.meta["x"]) > 3_000_000


async def _first_page(transport: Transport) -> Any:
    try:
        return await transport.get_page("documents")
    finally:
        await transport.aclose()
