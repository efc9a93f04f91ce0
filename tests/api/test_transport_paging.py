"""`Transport.paginate` over `httpx.MockTransport`: from the first page or from a `links.next` cursor, at most `max_pages`."""

from __future__ import annotations

import asyncio

import httpx

from shipsync.api.transport import Transport

BASE = "http://service.test/v2"
PAGES = 5


def _listing(request: httpx.Request) -> httpx.Response:
    """Five pages of one resource each; page n links to n+1 and echoes the query it was asked with."""
    number = int(request.url.params.get("page[number]", "1"))
    links = {"next": f"{BASE}/things?page[number]={number + 1}&page[size]=1"} if number < PAGES else {}
    body = {"data": [{"type": "thing", "id": str(number), "attributes": {"query": str(request.url.query, "ascii")}}], "links": links}
    return httpx.Response(200, json=body, headers={"content-type": "application/vnd.api+json"})


def _read(start: str | None, max_pages: int | None) -> tuple[list[str], list[str]]:
    """Ids read and the query each page was asked with."""

    async def run() -> tuple[list[str], list[str]]:
        transport = Transport(BASE, "key", http_transport=httpx.MockTransport(_listing))
        try:
            pages = [page async for page in transport.paginate("things", {"include": "x"}, page_size=1, max_pages=max_pages, start=start)]
        finally:
            await transport.aclose()
        resources = [r for page in pages for r in page.data]
        return [r["id"] for r in resources], [r["attributes"]["query"] for r in resources]

    return asyncio.run(run())


def test_from_the_first_page_sends_the_query_and_follows_next() -> None:
    ids, queries = _read(None, None)
    assert ids == ["1", "2", "3", "4", "5"]
    assert "include=x" in queries[0] and "page%5Bsize%5D=1" in queries[0]


def test_from_a_cursor_resumes_there_without_sending_the_query_again() -> None:
    ids, queries = _read(f"{BASE}/things?page[number]=3&page[size]=1", 2)
    assert ids == ["3", "4"]
    assert all("include" not in q for q in queries)


def test_max_pages_stops_without_reading_further() -> None:
    ids, _ = _read(None, 2)
    assert ids == ["1", "2"]
