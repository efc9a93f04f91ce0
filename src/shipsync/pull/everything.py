"""`pull all`: the part of every resource `pull.resources` puts in it, in that table's order
(documents, tracking requests, shipments, containers and shipping lines, then the places, metro
areas and schemas they name), in one run: one snapshot when it commits.

`EVERY_PULL` is the table with `all` at its end: what `shipsync pull` and the flows offer. Like the
table, this module imports its pulls only when they run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from shipsync.pull.declaration import FORCE, PulledResource
from shipsync.pull.resources import PULLED

if TYPE_CHECKING:
    from shipsync.config import Settings
    from shipsync.pull.steps import Progress, StepRunner
    from shipsync.warehouse.ledger import RunRecord, WarehouseRun


def pull_all_step(run: WarehouseRun, settings: Settings, *, force: bool = False, runner: StepRunner, progress: Progress) -> list[RunRecord]:
    """Every pull, in the order that lets each read what the ones before it named, within `run`."""
    settings.require_api_key()
    records: list[RunRecord] = []
    for resource in PULLED:
        records += resource.pull_all_part(run, settings, force=force, runner=runner, progress=progress)
    return records


def pull_all(
    settings: Settings, *, force: bool = False, runner: StepRunner | None = None, progress: Progress | None = None
) -> list[RunRecord]:
    """`pull_all_step` as a run of its own (`runner`: each batch directly unless given)."""
    from shipsync.pull.steps import in_own_run, no_progress, run_direct

    return in_own_run(settings, PULL_ALL.flow, pull_all_step, force=force, runner=runner or run_direct, progress=progress or no_progress)


def _run_all(settings: Settings, *, flow: str, runner: StepRunner, progress: Progress, force: bool) -> Sequence[RunRecord]:
    return pull_all(settings, force=force, runner=runner, progress=progress)


PULL_ALL = PulledResource(
    name="all",
    help="Documents, tracking requests, shipments, containers, shipping lines, then the places, metro areas and schemas they name.",
    run=_run_all,
    options=(FORCE,),
    deployments=("pull-all",),
    run_name="Daily pull",
)
EVERY_PULL: tuple[PulledResource, ...] = (*PULLED, PULL_ALL)
