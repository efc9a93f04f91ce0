"""What declares a pulled resource: `PulledResource`, one entry from which its command
(`shipsync pull NAME`), its Prefect flow (`flows/pull.py`), its ledger name, its part of `pull all`
and the check of its deployments in prefect.yaml follow. The table of them is `pull.resources`.

An `Option` is one parameter, named alike everywhere: the command's `--flag`, the flow's parameter
(what a deployment's `parameters` set) and the keyword the resource's `run` takes.

This module imports nothing heavy: the command line reads the declarations to build its commands,
and a declaration's `run` imports its pull when it is called.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from shipsync.config import Settings
    from shipsync.pull.steps import Progress, StepRunner
    from shipsync.warehouse.ledger import RunRecord, WarehouseRun

# switch: a bool, off unless given; days: a number of days; ids: strings, the flag repeatable;
# file: a path (the flow takes it as text).
OptionKind = Literal["switch", "days", "ids", "file"]


@dataclass(frozen=True)
class Option:
    """One parameter of a pull (see the module's docstring)."""

    parameter: str
    kind: OptionKind
    flag: str
    help: str
    default_days: float = 7.0  # the default of a `days` option

    @property
    def default(self) -> Any:
        """The value when not given, as `run` takes it."""
        return {"switch": False, "days": self.default_days, "ids": [], "file": None}[self.kind]

    def value(self, given: Any) -> Any:
        """What `run` takes from a command's or a flow's value (a flow gives None for no ids, a
        file as text)."""
        if self.kind == "ids":
            return [str(i) for i in given or ()]
        if self.kind == "file":
            return Path(given) if given else None
        return self.default if given is None else given


FORCE = Option("force", "switch", "--force", "Fetch even what was fetched within the freshness window.")
FRESHNESS_DAYS = Option("freshness_days", "days", "--freshness-days", "Skip what was fetched this recently unless --force.")
IDS_FILE = Option("ids_file", "file", "--ids-file", "A file with one id per line.")


def ids(parameter: str, help: str = "An id to pull; repeatable.") -> Option:
    """The ids to pull, `--id` on the command line, `parameter` in the flow."""
    return Option(parameter, "ids", "--id", help)


# A pull as a run of its own (one snapshot) that the ledger calls `flow`: called with the settings
# and the keywords `flow`, `runner`, `progress` and one per option; it returns its ledger records.
RunPull = Callable[..., Sequence["RunRecord"]]


class PullAllStep(Protocol):
    """A resource's part of `pull all`: its steps within that one run (none when it has nothing to do)."""

    def __call__(
        self, run: WarehouseRun, settings: Settings, *, flow: str, force: bool, runner: StepRunner, progress: Progress
    ) -> Sequence[RunRecord]: ...


@dataclass(frozen=True)
class PulledResource:
    """One thing `shipsync pull` takes: its name, what it does, how it runs, and where else it appears.

    `name` is the command (`shipsync pull shipping-lines`); the flow and the ledger call its runs
    `pull_<name>` (dashes as underscores), its flow runs' counts artifact is `pull-<name>`.
    `help` is the command's help and the flow's description. `run` pulls it as a run of its own
    with the `options`. `in_pull_all`: its part of `pull all`, in the table's order (None: `pull
    all` leaves it out). `deployments`: the prefect.yaml deployments that run its flow (a test
    checks prefect.yaml against them). `run_name`: what the report calls its runs.
    """

    name: str
    help: str
    run: RunPull
    options: tuple[Option, ...] = ()
    in_pull_all: PullAllStep | None = None
    deployments: tuple[str, ...] = ()
    run_name: str = ""

    @property
    def flow(self) -> str:
        return f"pull_{self.name.replace('-', '_')}"

    @property
    def artifact_key(self) -> str:
        return f"pull-{self.name}"

    @property
    def label(self) -> str:
        """The resource in words (`shipping lines`), for a progress bar."""
        return self.name.replace("-", " ")

    @property
    def said(self) -> str:
        """What the report calls its runs (`Shipping lines pull` unless `run_name` says otherwise)."""
        return self.run_name or f"{self.label.capitalize()} pull"

    def values(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """The keywords `run` takes, from a command's or a flow's parameters."""
        return {option.parameter: option.value(given.get(option.parameter)) for option in self.options}

    def pull(self, settings: Settings, given: Mapping[str, Any], *, runner: StepRunner, progress: Progress) -> Sequence[RunRecord]:
        """Run it with the parameters a command or a flow was given."""
        return self.run(settings, flow=self.flow, runner=runner, progress=progress, **self.values(given))

    def pull_all_part(
        self, run: WarehouseRun, settings: Settings, *, force: bool, runner: StepRunner, progress: Progress
    ) -> Sequence[RunRecord]:
        """Its steps within `pull all` (none when `pull all` leaves it out)."""
        if self.in_pull_all is None:
            return []
        return self.in_pull_all(run, settings, flow=self.flow, force=force, runner=runner, progress=progress)


@dataclass(frozen=True)
class FullListing:
    """A resource pulled by walking its whole listing (`GET /<path>`, 100 a page) into the declared
    `table` (`pull.full_listing`): `run` pulls it as a run of its own, `step` within `pull all`."""

    path: str
    table: str

    def run(self, settings: Settings, *, flow: str, runner: StepRunner, progress: Progress) -> Sequence[RunRecord]:
        from shipsync.pull.full_listing import pull_listing

        return [pull_listing(settings, flow, self.path, self.table, runner=runner, progress=progress)]

    def step(
        self, run: WarehouseRun, settings: Settings, *, flow: str, force: bool, runner: StepRunner, progress: Progress
    ) -> Sequence[RunRecord]:
        from shipsync.pull.full_listing import pull_listing_step

        return [pull_listing_step(run, settings, flow, self.path, self.table, runner=runner, progress=progress)]


def by_name(resources: Sequence[PulledResource]) -> dict[str, PulledResource]:
    """The resources by name; two of one name, or of one flow, is a mistake in the table."""
    found: dict[str, PulledResource] = {}
    for resource in resources:
        if resource.name in found:
            raise ValueError(f"two pulled resources are named {resource.name!r}")
        found[resource.name] = resource
    return found
