"""`python -m shipsync` is the `shipsync` command."""

from shipsync.cli import main

if __name__ == "__main__":
    main()
