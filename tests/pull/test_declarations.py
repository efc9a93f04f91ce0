"""The table of pulled resources (`shipsync.pull.resources`) is the one place a pull is declared:
each declaration's run takes exactly its options, prefect.yaml deploys exactly the declared flows
(a missing or stray entry is named), and the command line has each resource with its options."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from shipsync.cli import app
from shipsync.pull.declaration import PulledResource
from shipsync.pull.everything import EVERY_PULL

ROOT = Path(__file__).resolve().parents[2]
PULL_FLOWS = "flows/pull.py:"
HANDED_DOWN = {"settings", "flow", "runner", "progress"}


def deployment_problems(project: dict[str, object], resources: tuple[PulledResource, ...]) -> list[str]:
    """What prefect.yaml lacks, or has that no declaration names, among the pull deployments."""
    deployments = project.get("deployments") or []
    assert isinstance(deployments, list)
    found = {d["name"]: d["entrypoint"] for d in deployments if str(d.get("entrypoint", "")).startswith(PULL_FLOWS)}
    declared = {name: f"{PULL_FLOWS}{r.flow}" for r in resources for name in r.deployments}
    problems = [
        f"prefect.yaml has no deployment {name!r} (entrypoint {entrypoint}), declared in shipsync.pull.resources"
        for name, entrypoint in declared.items()
        if name not in found
    ]
    problems += [
        f"prefect.yaml's deployment {name!r} runs {found[name]}, its declaration's flow is {entrypoint}"
        for name, entrypoint in declared.items()
        if name in found and found[name] != entrypoint
    ]
    problems += [f"prefect.yaml's deployment {name!r} is declared by no pulled resource" for name in found if name not in declared]
    return problems


def test_prefect_yaml_deploys_exactly_the_declared_pulls() -> None:
    project = yaml.safe_load((ROOT / "prefect.yaml").read_text())
    assert deployment_problems(project, EVERY_PULL) == []


def test_a_deployment_missing_from_prefect_yaml_is_named() -> None:
    project = yaml.safe_load((ROOT / "prefect.yaml").read_text())
    project["deployments"] = [d for d in project["deployments"] if d["name"] != "pull-places"]
    project["deployments"].append({"name": "pull-stray", "entrypoint": "flows/pull.py:pull_stray"})
    assert deployment_problems(project, EVERY_PULL) == [
        "prefect.yaml has no deployment 'pull-places' (entrypoint flows/pull.py:pull_places), declared in shipsync.pull.resources",
        "prefect.yaml's deployment 'pull-stray' is declared by no pulled resource",
    ]


@pytest.mark.parametrize("resource", EVERY_PULL, ids=lambda r: r.name)
def test_each_run_takes_exactly_its_options(resource: PulledResource) -> None:
    taken = set(inspect.signature(resource.run).parameters) - HANDED_DOWN
    assert taken == {option.parameter for option in resource.options}


def test_names_are_unique_and_flows_follow_them() -> None:
    assert len({r.name for r in EVERY_PULL}) == len(EVERY_PULL)
    assert [r.flow for r in EVERY_PULL if r.name in ("shipping-lines", "all")] == ["pull_shipping_lines", "pull_all"]


@pytest.mark.parametrize("resource", EVERY_PULL, ids=lambda r: r.name)
def test_each_resource_is_a_pull_command_with_its_options(resource: PulledResource) -> None:
    result = CliRunner().invoke(app, ["pull", resource.name, "--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    for option in resource.options:
        assert option.flag in result.output
