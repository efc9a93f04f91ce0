"""What every command shares: settings at the edge, one-line errors, the console, and `line`, the
one way a command puts text on it.

The consoles read no Rich markup: a cell `[/x]` would end a style that was never opened (Rich
raises) and `[link=...]` would turn a file's text into a clickable link. Text from data (cells,
ids, file names, messages from the service) goes through `line`, which also shows control and
bidirectional characters escaped (`shipsync.plain_text`); the words a command styles itself are
made by `styled`.
"""

from __future__ import annotations

import errno
import sys
import tempfile
from collections.abc import Callable
from functools import wraps
from typing import ParamSpec, TypeVar

import typer
from rich.console import Console
from rich.text import Text

from shipsync.config import Settings, load_settings
from shipsync.errors import ShipsyncError
from shipsync.plain_text import plain
from shipsync.redaction import redact

# Off a terminal Rich assumes 80 columns, which folds every table; logs and pipes can take more.
_WIDTH = None if sys.stdout.isatty() else 160
console = Console(markup=False, emoji=False, highlight=False, soft_wrap=True, width=_WIDTH)
err_console = Console(stderr=True, markup=False, emoji=False, highlight=False, soft_wrap=True, width=_WIDTH)


def styled(text: str, style: str) -> Text:
    """Words a command styles itself (`styled("error:", "red")`), for `line`."""
    return Text(plain(text), style=style)


def line(*parts: object) -> Text:
    """One line for the console: each part as plain text (`str(part)`, control and bidirectional
    characters escaped), a part made by `styled` as it is."""
    return Text.assemble(*(part if isinstance(part, Text) else plain(str(part)) for part in parts))


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


_NO_SPACE = (errno.ENOSPC, errno.EDQUOT)


def no_space(exc: OSError) -> str:
    """A full disk, in one line: where, if the error says, and where temporary files go."""
    where = f" writing {exc.filename}" if exc.filename else ""
    return (
        f"no space left on the device{where} ({exc.strerror or exc}); free some, or set TMPDIR to a folder with room "
        f"(temporary files go to {tempfile.gettempdir()})"
    )


def one_line_errors(func: Callable[P, R]) -> Callable[P, R]:
    """Turn a ShipsyncError into `error: <message>` on stderr and exit status 1 (no traceback)."""

    @wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except ShipsyncError as exc:
            err_console.print(line(styled("error:", "red"), " ", redact(str(exc))))
            raise typer.Exit(1) from None
        except Exception as exc:
            if isinstance(exc, OSError) and exc.errno in _NO_SPACE:
                err_console.print(line(styled("error:", "red"), " ", redact(no_space(exc))))
                raise typer.Exit(1) from None
            if not _is_duckdb_error(exc):
                raise
            # A warehouse failure nobody anticipated: still one line.
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            err_console.print(line(styled("error:", "red"), " warehouse: ", redact(first)))
            raise typer.Exit(1) from None
        except KeyboardInterrupt:
            err_console.print(line("interrupted"))
            raise typer.Exit(130) from None

    return wrapper
