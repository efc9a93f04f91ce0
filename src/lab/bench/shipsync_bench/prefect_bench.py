"""Prefect overhead: the same 10,000-document pull, plain and as a flow (tasks per batch).

Overhead share = (flow time - plain time) / flow time, measured against one sandbox process with its
rate limit off, each run into a fresh warehouse. The Prefect API is a test harness started before
timing, as a deployment's worker talks to an already-running server; the flow is loaded from the
project folder (SHIPSYNC_PROJECT_DIR, else here) by its entrypoint, as a worker loads it.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from shipsync.config import load_settings
from shipsync_bench.processes import SandboxProcess
from shipsync_bench.results import BenchResult, under
from shipsync_sandbox import DEFAULT_API_KEYS

KEY = DEFAULT_API_KEYS[0]


def prefect_overhead(documents: int = 10_000, rounds: int = 3) -> list[BenchResult]:
    project = Path(os.environ.get("SHIPSYNC_PROJECT_DIR") or ".")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    home = Path(os.environ.setdefault("PREFECT_HOME", tempfile.mkdtemp(prefix="shipsync-prefect-")))
    home.mkdir(parents=True, exist_ok=True)
    from prefect.flows import load_flow_from_entrypoint
    from prefect.testing.utilities import prefect_test_harness

    from shipsync.pull.documents import pull_documents

    with (
        tempfile.TemporaryDirectory(prefix="shipsync-bench-") as tmp,
        SandboxProcess("--rate-limit", "0", "--documents", str(documents), "--api-key", KEY) as sandbox,
    ):
        env = {"SHIPSYNC_API_URL": sandbox.api_url, "SHIPSYNC_API_KEY": KEY, "SHIPSYNC_RATE_LIMIT": "0"}
        saved = {k: os.environ.get(k) for k in [*env, "SHIPSYNC_WAREHOUSE"]}
        os.environ.update(env)
        try:
            with prefect_test_harness(server_startup_timeout=120):
                entrypoint = f"{project.resolve()}/flows/pull.py:pull_documents"
                pull_documents_flow: Any = load_flow_from_entrypoint(entrypoint, use_placeholder_flow=False)

                plain_times, flow_times, empty_times = [], [], []
                for n in range(rounds):  # alternate, and keep the better of each (noise only slows)
                    settings = load_settings(warehouse=Path(tmp) / f"plain{n}.duckdb")
                    started = time.perf_counter()
                    record = pull_documents(settings, all_documents=True)
                    plain_times.append(time.perf_counter() - started)
                    assert record.totals().inserted > 0
                    os.environ["SHIPSYNC_WAREHOUSE"] = str(Path(tmp) / f"flow{n}.duckdb")
                    started = time.perf_counter()
                    asyncio.run(pull_documents_flow(all_documents=True))
                    flow_times.append(time.perf_counter() - started)
                    started = time.perf_counter()
                    empty_flow()
                    empty_times.append(time.perf_counter() - started)
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
    plain, flow, empty = min(plain_times), min(flow_times), min(empty_times)
    share = max(0.0, (flow - plain) / flow) * 100
    beyond_fixed = max(0.0, (flow - plain - empty) / flow) * 100
    return [
        BenchResult(
            f"pull_documents {documents:,} docs as a flow", flow, "s", "same pull without Prefect", plain, flow / plain, "(context)", True
        ),
        under(f"Prefect share of pull_documents wall time ({documents:,} docs)", share, "%", 10),
        # What a run costs however small (an empty async flow, ~0.2 s), and what our task
        # structure adds beyond it.
        under(f"Prefect share beyond an empty flow ({empty:.2f} s), {documents:,} docs", beyond_fixed, "%", 10),
    ]


def empty_flow() -> None:
    """An async flow that does nothing, like the pull flows' engine (see shipsync.orchestration.task_runner)."""
    from prefect import flow

    @flow(name="empty")
    async def nothing() -> None:
        return None

    asyncio.run(nothing())
