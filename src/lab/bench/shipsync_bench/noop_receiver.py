"""The receiver's peer in the benchmarks: an ASGI app on the same stack that reads each body and
answers 200, storing nothing (`python -m uvicorn shipsync_bench.noop_receiver:noop_app`)."""

from __future__ import annotations

from starlette.types import Receive, Scope, Send

_ANSWER = b'{"received":true}'


async def noop_app(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] != "http":
        return
    while (await receive()).get("more_body", False):
        pass
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(_ANSWER))]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": _ANSWER})
