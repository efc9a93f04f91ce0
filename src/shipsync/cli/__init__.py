"""The `shipsync` command: one sub-module per command group, all thin over library functions."""

from shipsync.cli.main import app, main

__all__ = ["app", "main"]
