"""`python -m shipsync` is the `shipsync` command."""

from shipsync.cli import main

# Guarded: worker processes (spawned, see `warehouse.normalize_workers`) import the main module again.
if __name__ == "__main__":
    main()
