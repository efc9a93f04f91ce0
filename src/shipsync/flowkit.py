"""What the Prefect flows share: settings (key from env or a Secret block), batch steps as tasks,
and the markdown artifact of a run's counts. Imported only by flows, so the library runs without
Prefect's machinery.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Coroutine, Sequence
from functools import cache, wraps
from typing import Any, ParamSpec, TypeVar

from prefect import task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NONE

from shipsync.config import Settings, load_settings
from shipsync.logsetup import setup_logging
from shipsync.prefect_budget import attach_prefect_budget
from shipsync.redaction import redact
from shipsync.warehouse.ledger import RunRecord

T = TypeVar("T")
P = ParamSpec("P")
API_KEY_BLOCK = "shipsync-api-key"


def flow_settings() -> Settings:
    """SHIPSYNC_* from the environment; the API key from a Prefect Secret block when not in env.

    Clients made from these settings draw from the Prefect-wide rate budget.
    """
    return attach_prefect_budget(_settings_with_key())


def _settings_with_key() -> Settings:
    if not os.environ.get("SHIPSYNC_API_KEY"):
        try:
            from prefect.blocks.system import Secret

            secret: Any = Secret.load(API_KEY_BLOCK, _sync=True)  # type: ignore[call-arg]
            return load_settings(api_key=str(secret.get()))
        except (ValueError, ImportError):
            pass  # no block either: load_settings lets require_api_key name the variable
    return load_settings()


@cache
def _task_for(fn: Callable[..., Any], name: str) -> Any:
    # No cache policy: hashing a batch of documents to build a cache key would cost more than the batch.
    return task(name=name, cache_policy=NONE, persist_result=False, retries=0)(fn)


def runs_in_worker_thread(body: Callable[P, T]) -> Callable[P, Coroutine[Any, Any, T]]:
    """Make a flow's blocking body an async function that runs it in a worker thread carrying
    the flow run's context; put it under `@flow`.

    The flows are async so that Prefect's engine does not join its heartbeat thread when a run
    ends: the sync engine waits for it, up to a second (it sleeps in 1-second steps), which was a
    fifth of a 10,000-document pull; an empty async flow costs 0.2 s here instead of 1.1 s.
    Heartbeats still run while the flow does. The bodies are the library's blocking functions
    (they run their own event loops for HTTP), hence the thread. Prefect calls made from it pass
    `_sync=True`: Prefect sees the async flow and would otherwise hand back a coroutine.
    """

    @wraps(body)
    async def in_thread(*args: P.args, **kwargs: P.kwargs) -> T:
        setup_logging()  # a flow run is an entry point: mask secrets in every record, Prefect's too
        return await asyncio.to_thread(body, *args, **kwargs)

    return in_thread


def prefect_step(name: str, fn: Callable[..., T], /, *args: Any) -> T:
    """The StepRunner for flows: each batch step is one Prefect task run."""
    result: T = _task_for(fn, name)(*args)
    return result


def publish(records: Sequence[RunRecord], key: str) -> None:
    """A markdown artifact with each run's counts, requests, 429s, retries, 404s and give-ups."""
    lines = []
    for record in records:
        totals = record.totals()
        lines += [
            f"## {record.flow} `{record.run_id}`",
            f"requests {record.stats.requests} · 429s {record.stats.throttled} · retries {record.stats.retries} · "
            f"inserted {totals.inserted} · updated {totals.updated} · unchanged {totals.unchanged}",
            "",
            "| table | inserted | updated | unchanged | deleted |",
            "|---|---:|---:|---:|---:|",
            *(
                f"| {name} | {c['inserted']} | {c['updated']} | {c['unchanged']} | {c['deleted']} |"
                for name, c in record.counts_dict().items()
            ),
            "",
        ]
        if record.not_found:
            lines.append(f"**Not found ({len(record.not_found)}):** " + ", ".join(record.not_found[:50]))
        if record.errors:
            lines.append(f"**Given up ({len(record.errors)}):**")
            lines += [f"- {e}" for e in record.errors[:50]]
    create_markdown_artifact(key=key, markdown=redact("\n".join(lines)), description="shipsync run counts", _sync=True)  # type: ignore[call-arg]
