"""The settings of a flow run, built once when the run starts and passed down: SHIPSYNC_* from the
worker's environment (the API key too: never a block on the Prefect server), the Prefect-wide rate
budget, and the flow run's id for the run ledger. Also, until the warehouse becomes a lake, the
Prefect-wide slot that serializes warehouse writes.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext

from shipsync.config import Settings, load_settings
from shipsync.orchestration.rate_budget import attach_prefect_budget, ensure_limit, prefect_api_configured

WAREHOUSE_LIMIT = "shipsync-warehouse"


def _serialize_warehouse_writes() -> None:
    """Writers in every worker take the `shipsync-warehouse` global concurrency limit (1 slot)."""
    from prefect.concurrency.sync import concurrency
    from prefect.context import FlowRunContext

    from shipsync.warehouse.connection import set_write_guard

    if not prefect_api_configured():
        return
    ensure_limit(WAREHOUSE_LIMIT, 1)

    def guard() -> AbstractContextManager[object]:
        # Only inside a flow run: the same process may also serve the CLI or tests afterwards.
        if FlowRunContext.get() is None:
            return nullcontext()
        return concurrency(WAREHOUSE_LIMIT, occupy=1, strict=True)

    set_write_guard(guard)


def flow_settings() -> Settings:
    """The settings of the flow run this is called in (once, at its start).

    Clients made from them draw from the Prefect-wide rate budget, the ledger rows of its runs name
    the flow run, and this process's warehouse writes take the shared write slot.
    """
    from prefect.runtime import flow_run

    _serialize_warehouse_writes()
    settings = attach_prefect_budget(load_settings())
    return settings.with_flow_run(str(flow_run.id) if flow_run.id else None)
