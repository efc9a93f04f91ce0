"""Work-arounds for Prefect 3.8.8 on the FastAPI it can run with here (< 0.155).

Its client sends `"limit": null, "offset": null` when reading a pool's workers, which that FastAPI
refuses with 422, so `prefect deploy` fails after creating nothing. `shipsync deploy` applies the
fix below and then runs Prefect's own `deploy` command unchanged.
"""

from __future__ import annotations

import functools
from typing import Any

DEFAULT_LIMIT = 200


def patch_worker_listing() -> None:
    from prefect.client.orchestration import PrefectClient

    original = PrefectClient.read_workers_for_work_pool
    if getattr(original, "_shipsync_patched", False):
        return

    @functools.wraps(original)
    async def read_workers_for_work_pool(
        self: Any, work_pool_name: str, worker_filter: Any = None, offset: int | None = None, limit: int | None = None
    ) -> Any:
        return await original(self, work_pool_name, worker_filter=worker_filter, offset=offset or 0, limit=limit or DEFAULT_LIMIT)

    read_workers_for_work_pool._shipsync_patched = True  # type: ignore[attr-defined]
    PrefectClient.read_workers_for_work_pool = read_workers_for_work_pool  # type: ignore[method-assign]


def run_prefect_cli(args: list[str]) -> int:
    """Run a `prefect` command in this process with the work-arounds applied; its exit status."""
    import sys

    patch_worker_listing()
    from prefect.cli import app

    saved, sys.argv = sys.argv, ["prefect", *args]
    try:
        app()
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
    finally:
        sys.argv = saved
    return 0
