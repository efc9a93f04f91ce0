"""The demo's Prefect side: an embedded Prefect API for the run (Prefect's own server process on a
free loopback port, its SQLite database in the demo folder, kept between runs), each step run as
the flow it is (loaded from the project's flows/ by its entrypoint, as a worker loads it), and the
flow runs read back from the API with their state, duration and artifacts.
"""

from __future__ import annotations

import asyncio
import importlib
import os
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Self
from uuid import UUID

from shipsync.orchestration.environment import ELSEWHERE, prefect_env
from shipsync.orchestration.project import require_project
from shipsync.serving import stop_process, wait_until_answers
from shipsync_sandbox.serving import free_port

UI_PORT = 4200
# Modules Prefect imports lazily when a process runs its first flow (its parameters' encoder is
# FastAPI's): about half a second that the server's start-up can hide.
WARM_IMPORTS = ("fastapi.encoders", "prefect.flow_engine", "prefect.utilities.visualization")


def use_prefect_home(home: Path, extra: Mapping[str, str] | None = None) -> None:
    """Point this process's Prefect at `home`, its own: call before Prefect is first imported."""
    if "prefect" in sys.modules:
        raise RuntimeError("Prefect is already imported: its home can no longer change in this process")
    for name in ELSEWHERE:
        os.environ.pop(name, None)
    os.environ.update(prefect_env(home, base={}, extra=extra))


def load_flow(project: Path, entrypoint: str) -> Any:
    """The flow at `entrypoint` (`flows/pull.py:pull_all`), a path relative to the project folder."""
    from prefect.flows import load_flow_from_entrypoint

    path, _, name = entrypoint.rpartition(":")
    return load_flow_from_entrypoint(f"{require_project(project) / path}:{name}", use_placeholder_flow=False)


@dataclass(frozen=True)
class FlowRunSeen:
    """A flow run the demo made, read back from the Prefect API."""

    step: str
    flow: str
    flow_run_id: str
    name: str = ""
    state: str = ""
    seconds: float = 0.0
    rows: int | None = None
    artifacts: list[str] = field(default_factory=list)


class EmbeddedPrefect:
    """`with EmbeddedPrefect(home, project) as prefect: prefect.load(entrypoints); ...;
    prefect.wait_until_ready(); prefect.run(step, "flows/pull.py:pull_all", ...)`.

    Entering starts the API server process at once (before the demo's own imports: its start-up is
    the demo's longest wait); `load` then loads the flows meanwhile. Both must happen before anything
    imports Prefect in this process (Prefect reads its home once).
    """

    def __init__(self, home: Path, project: Path) -> None:
        self.home = home
        self.project = require_project(project)
        self.flows: dict[str, Any] = {}
        self.api_url = f"http://127.0.0.1:{free_port()}/api"
        self.started_in = 0.0
        self.runs: list[FlowRunSeen] = []
        self._stack = ExitStack()
        self._started = 0.0
        self._server: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Self:
        self._started = time.monotonic()
        # Prefect's ephemeral server, as Prefect itself starts it when no API URL is set (no UI, no
        # background services), on a port we know; started by hand so that its ~10 s start-up runs
        # while this process imports Prefect and the flows.
        env = prefect_env(self.home, extra={"PREFECT_UI_ENABLED": "0", "PREFECT__SERVER_EPHEMERAL": "1", "PREFECT__SERVER_FINAL": "1"})
        log = self._stack.enter_context((self.home / "server.log").open("ab"))
        port = self.api_url.rsplit(":", 1)[1].split("/")[0]
        uvicorn = [sys.executable, "-m", "uvicorn", "--factory", "prefect.server.api.server:create_app", "--lifespan", "on"]
        self._server = subprocess.Popen(
            [*uvicorn, "--host", "127.0.0.1", "--port", port, "--log-level", "error"],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        self._stack.callback(stop_process, self._server)
        return self

    def load(self, entrypoints: Iterable[str]) -> None:
        """Load the flows at `entrypoints` (as prefect.yaml names them) while the server starts, and
        point this process's Prefect at it."""
        # Flow runs log to the API (the UI shows them); the terminal shows the demo's own lines.
        use_prefect_home(self.home, extra={"PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL": "WARNING"})
        self.flows = {entrypoint: load_flow(self.project, entrypoint) for entrypoint in sorted(set(entrypoints))}
        for module in WARM_IMPORTS:  # what Prefect imports at a process's first flow run, imported now
            importlib.import_module(module)
        from prefect.settings import PREFECT_API_URL, temporary_settings

        self._stack.enter_context(temporary_settings({PREFECT_API_URL: self.api_url}))

    def wait_until_ready(self) -> None:
        assert self._server is not None
        wait_until_answers(f"{self.api_url}/health", self._server, timeout_s=180)
        self.started_in = time.monotonic() - self._started

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        from prefect.events.worker import EventsWorker
        from prefect.logging.handlers import APILogWorker

        # Send the runs' last logs and events while the server still listens: left for exit, they
        # would retry against a stopped server for a minute.
        APILogWorker.drain_all(timeout=10)
        EventsWorker.drain_all(timeout=10)
        self._stack.close()

    @property
    def database(self) -> Path:
        return self.home / "prefect.db"

    def run(self, step: str, entrypoint: str, **parameters: Any) -> Any:
        """Run the flow at `entrypoint` (an async Prefect flow) to its end; its result, or its exception raised here."""
        flow = self.flows[entrypoint]
        state = asyncio.run(flow(**parameters, return_state=True))
        self.runs.append(FlowRunSeen(step, flow.name, str(state.state_details.flow_run_id)))
        return state.result()

    def read_back(self, rows: dict[str, int | None]) -> list[FlowRunSeen]:
        """The runs made so far as the API records them, with `rows` (by flow run id) attached."""
        from prefect.client.orchestration import get_client
        from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId, FlowRunFilter, FlowRunFilterId

        ids = [UUID(run.flow_run_id) for run in self.runs]
        with get_client(sync_client=True) as client:
            flow_runs = {
                str(r.id): r for r in client.read_flow_runs(flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=ids)), limit=200)
            }
            artifacts: dict[str, list[str]] = {}
            for artifact in client.read_artifacts(artifact_filter=ArtifactFilter(flow_run_id=ArtifactFilterFlowRunId(any_=ids)), limit=200):
                artifacts.setdefault(str(artifact.flow_run_id), []).append(artifact.key or artifact.type or "")
        seen = []
        for run in self.runs:
            data = flow_runs.get(run.flow_run_id)
            seen.append(
                FlowRunSeen(
                    run.step,
                    run.flow,
                    run.flow_run_id,
                    name=data.name if data else "",
                    state=(data.state_name or "") if data else "",
                    seconds=data.total_run_time.total_seconds() if data else 0.0,
                    rows=rows.get(run.flow_run_id),
                    artifacts=sorted(set(artifacts.get(run.flow_run_id, []))),
                )
            )
        return seen

    def browse_hint(self) -> list[str]:
        """How to see these runs in the Prefect UI once the demo has ended."""
        return [
            f"PREFECT_HOME={self.home} uv run prefect server start    # the runs, logs and artifacts above, kept in {self.database}",
            f"then open http://127.0.0.1:{UI_PORT}/runs (a run: /runs/flow-run/ID; an artifact: /artifacts/key/KEY)",
        ]
