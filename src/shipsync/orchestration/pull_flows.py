"""The Prefect flow of each resource `pull.resources` declares: named as its ledger runs
(`pull_documents`), its parameters the declaration's options (what a deployment's `parameters`
set), each batch step a task run, and its counts left as a markdown artifact (`pull-documents`)."""

from __future__ import annotations

import inspect
from typing import Any

from prefect import Flow, flow

from shipsync.orchestration.artifacts import run_counts
from shipsync.orchestration.flow_settings import flow_settings
from shipsync.orchestration.task_runner import prefect_step, runs_in_worker_thread
from shipsync.pull.declaration import Option, PulledResource
from shipsync.pull.everything import EVERY_PULL
from shipsync.pull.steps import no_progress

# How each kind of option reads as a flow parameter: its type and its default (a list or a path is
# None when not given: a deployment's parameters are JSON).
_FLOW_TYPES: dict[str, tuple[Any, Any]] = {
    "switch": (bool, False),
    "days": (float, None),
    "ids": (list[str] | None, None),
    "file": (str | None, None),
}


def _parameter(option: Option) -> inspect.Parameter:
    annotation, default = _FLOW_TYPES[option.kind]
    default = option.default_days if option.kind == "days" else default
    return inspect.Parameter(option.parameter, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default, annotation=annotation)


def pull_flow(resource: PulledResource) -> Flow[..., Any]:
    """The flow that pulls `resource` as a run of its own."""
    signature = inspect.Signature([_parameter(option) for option in resource.options])

    def body(*args: Any, **kwargs: Any) -> None:
        given = signature.bind(*args, **kwargs).arguments
        records = resource.pull(flow_settings(), given, runner=prefect_step, progress=no_progress)
        run_counts(records, resource.artifact_key)

    body.__signature__ = signature  # type: ignore[attr-defined]
    body.__annotations__ = {p.name: p.annotation for p in signature.parameters.values()}
    body.__name__ = body.__qualname__ = resource.flow
    body.__doc__ = resource.help
    made: Flow[..., Any] = flow(name=resource.flow, description=resource.help, log_prints=True)(runs_in_worker_thread(body))
    return made


def pull_flows() -> dict[str, Flow[..., Any]]:
    """Every pull's flow, by its name (`pull_all`, `pull_documents`, ...)."""
    return {resource.flow: pull_flow(resource) for resource in EVERY_PULL}
