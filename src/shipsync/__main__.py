"""`python -m shipsync` is the `shipsync` command."""

from shipsync.cli import main

main()
