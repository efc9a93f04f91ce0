"""Logging at every entry point (the CLI, the flows, the receiver, the sandbox): records go to
standard error at the chosen level, and registered secrets are masked in every one of them."""

from __future__ import annotations

import logging
import sys

from shipsync.redaction import install_log_redaction

LEVELS = ("CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG")


def setup_logging(level: str | None = None) -> None:
    """Install the redaction, add a standard-error handler if nobody configured one (Prefect
    configures its own in flow runs), and set the root level when one is given."""
    install_log_redaction()
    root = logging.getLogger()
    if not root.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
        root.addHandler(handler)
        root.setLevel(logging.WARNING)
    if level is not None:
        root.setLevel(level.upper())
