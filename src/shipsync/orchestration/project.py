"""The project folder: where prefect.yaml and the flows (`flows/`) are, which workers run from
(`SHIPSYNC_PROJECT_DIR`, as prefect.yaml's pull step says).
"""

from __future__ import annotations

from pathlib import Path

from shipsync.errors import ConfigError


def require_project(folder: Path) -> Path:
    """`folder`, resolved, if it holds prefect.yaml and flows/; else a one-line ConfigError."""
    folder = folder.resolve()
    missing = [name for name in ("prefect.yaml", "flows") if not (folder / name).exists()]
    if missing:
        raise ConfigError(
            f"no {' or '.join(missing)} in {folder}: run from the project folder (a clone of shipsync), "
            "or name it with --project-dir or SHIPSYNC_PROJECT_DIR"
        )
    return folder
