"""`shipsync demo`: the whole pipeline against a local sandbox, as its Prefect flows.

Installed as the `demo` command of `shipsync` (entry point `shipsync.commands`)."""

from __future__ import annotations

import time
from pathlib import Path

import typer

from shipsync.cli.common import one_line_errors


@one_line_errors
def demo(
    workdir: str = typer.Option("shipsync-demo", help="Folder for the demo's warehouse, spool and result files."),
    documents: int = typer.Option(200, min=1, help="Documents the sandbox serves per account."),
    project_dir: Path = typer.Option(
        Path("."), envvar="SHIPSYNC_PROJECT_DIR", help="The project folder whose flows/ the demo runs (default: here)."
    ),
) -> None:
    """Run everything end to end against a local sandbox: no network, no key needed."""
    started = time.monotonic()
    from shipsync_demo.embedded_prefect import EmbeddedPrefect  # here: every shipsync command imports this module

    # Prefect's server first: its start-up (~6 s) is the demo's longest wait, and runs meanwhile.
    with EmbeddedPrefect(Path(workdir).resolve() / "prefect", project_dir) as prefect:
        from shipsync_demo.run import run_demo

        run_demo(prefect, workdir=workdir, documents=documents, started=started)
