"""Logging at every entry point (the CLI, the flows, the receiver, the sandbox): records go to
standard error at the chosen level, and registered secrets are masked in every one of them."""

from __future__ import annotations

import logging
import sys

from shipsync.redaction import install_log_redaction

LEVELS = ("CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG")
HANDLER_NAME = "shipsync-stderr"


def setup_logging(level: str | None = None) -> None:
    """Install the redaction, add a standard-error handler if nobody configured one (Prefect
    configures its own in flow runs), and set the level when one is given.

    The level is the handler's as well as the root logger's: a library that sets its own loggers
    to INFO (Prefect does, with its "View at http://..." links) would otherwise reach standard
    error through the root's handler whatever level the user chose."""
    install_log_redaction()
    root = logging.getLogger()
    if not root.handlers:
        ours = logging.StreamHandler(sys.stderr)
        ours.set_name(HANDLER_NAME)
        ours.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
        ours.setLevel(logging.WARNING)
        root.addHandler(ours)
        root.setLevel(logging.WARNING)
    if level is not None:
        root.setLevel(level.upper())
        for handler in root.handlers:
            if handler.get_name() == HANDLER_NAME:
                handler.setLevel(level.upper())
