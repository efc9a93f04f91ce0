"""How a flow runs the library's blocking code: the body in a worker thread (so the flow can be async),
and each batch step of a pull as one Prefect task run (the `StepRunner` the pulls take).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from functools import cache, wraps
from typing import Any, ParamSpec, TypeVar

from prefect import task
from prefect.cache_policies import NONE

from shipsync.logsetup import setup_logging

T = TypeVar("T")
P = ParamSpec("P")


def runs_in_worker_thread(body: Callable[P, T]) -> Callable[P, Coroutine[Any, Any, T]]:
    """Make a flow's blocking body an async function that runs it in a worker thread carrying
    the flow run's context; put it under `@flow`.

    The flows are async so that Prefect's engine does not join its heartbeat thread when a run
    ends: the sync engine waits for it, up to a second (it sleeps in 1-second steps), and a run's
    every flow would pay that wait.
    Heartbeats still run while the flow does. The bodies are the library's blocking functions
    (they run their own event loops for HTTP), hence the thread. Prefect calls made from it pass
    `_sync=True`: Prefect sees the async flow and would otherwise hand back a coroutine.
    """

    @wraps(body)
    async def in_thread(*args: P.args, **kwargs: P.kwargs) -> T:
        setup_logging()  # a flow run is an entry point: mask secrets in every record, Prefect's too
        return await asyncio.to_thread(body, *args, **kwargs)

    return in_thread


@cache
def _task_for(fn: Callable[..., Any], name: str) -> Any:
    # No cache policy: hashing a batch of documents to build a cache key would cost more than the batch.
    return task(name=name, cache_policy=NONE, persist_result=False, retries=0)(fn)


def prefect_step(name: str, fn: Callable[..., T], /, *args: Any) -> T:
    """The StepRunner for flows: each batch step is one Prefect task run."""
    result: T = _task_for(fn, name)(*args)
    return result
