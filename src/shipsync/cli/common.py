"""What every command shares: settings at the edge, one-line errors, the console."""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import wraps
from typing import ParamSpec, TypeVar

import typer
from rich.console import Console

from shipsync.config import Settings, load_settings
from shipsync.errors import ShipsyncError
from shipsync.redaction import redact

# Off a terminal Rich assumes 80 columns, which folds every table; logs and pipes can take more.
_WIDTH = None if sys.stdout.isatty() else 160
console = Console(highlight=False, soft_wrap=True, width=_WIDTH)
err_console = Console(stderr=True, highlight=False, soft_wrap=True, width=_WIDTH)

P = ParamSpec("P")
R = TypeVar("R")


def settings_from_env(**overrides: object) -> Settings:
    """Settings from SHIPSYNC_*; with a Prefect server configured, commands share the workers' rate budget."""
    from shipsync.orchestration.rate_budget import attach_prefect_budget

    return attach_prefect_budget(load_settings(**{k: v for k, v in overrides.items() if v is not None}))


def _is_duckdb_error(exc: Exception) -> bool:
    # duckdb is not imported for its exception class alone: commands that never open the
    # warehouse (serve, --help) start a second faster without it.
    duckdb = sys.modules.get("duckdb")
    return duckdb is not None and isinstance(exc, duckdb.Error)


def one_line_errors(func: Callable[P, R]) -> Callable[P, R]:
    """Turn a ShipsyncError into `error: <message>` on stderr and exit status 1 (no traceback)."""

    @wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except ShipsyncError as exc:
            err_console.print(f"[red]error:[/red] {redact(str(exc))}", markup=True, soft_wrap=True)
            raise typer.Exit(1) from None
        except Exception as exc:
            if not _is_duckdb_error(exc):
                raise
            # A warehouse failure nobody anticipated: still one line.
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            err_console.print(f"[red]error:[/red] warehouse: {redact(first)}", markup=True, soft_wrap=True)
            raise typer.Exit(1) from None
        except KeyboardInterrupt:
            err_console.print("interrupted")
            raise typer.Exit(130) from None

    return wrapper
