"""The settings of a flow run, built once when the run starts and passed down: SHIPSYNC_* from the
worker's environment (the API key too: never a block on the Prefect server), the Prefect-wide rate
budget, and the flow run's id for the run ledger. No slot serializes warehouse writes: the lake
takes writers side by side (see `shipsync.warehouse.unit_of_work`).
"""

from __future__ import annotations

from shipsync.config import Settings, load_settings
from shipsync.orchestration.rate_budget import attach_prefect_budget


def flow_settings() -> Settings:
    """The settings of the flow run this is called in (once, at its start).

    Clients made from them draw from the Prefect-wide rate budget, and the ledger rows of its runs
    name the flow run.
    """
    from prefect.runtime import flow_run

    settings = attach_prefect_budget(load_settings())
    return settings.with_flow_run(str(flow_run.id) if flow_run.id else None)
