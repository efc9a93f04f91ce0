"""What the commands print besides their own lines: nothing below the chosen level, whoever logs it.
Prefect sets its loggers to INFO ("View at http://..." for every flow run, links to a server that
may be gone by then); at the default level they stay off the terminal."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from support.waiting import HANG_S

# A fresh process, as a command is: the root logger there is set up by shipsync alone.
SCRIPT = textwrap.dedent(
    """
    import logging, sys
    from shipsync.logsetup import setup_logging
    setup_logging(sys.argv[1])
    chatty = logging.getLogger("prefect.flow_runs")
    chatty.setLevel(logging.INFO)  # as Prefect's logging configuration does
    chatty.info("View at http://127.0.0.1:4200/runs/flow-run/1")
    chatty.warning("a warning still shows")
    """
)


@pytest.mark.parametrize(("level", "shown"), [("WARNING", False), ("INFO", True)])
def test_a_librarys_info_lines_show_only_at_the_level_asked_for(level: str, shown: bool) -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT, level], capture_output=True, text=True, timeout=HANG_S, check=True)
    assert "a warning still shows" in done.stderr
    assert ("View at" in done.stderr) is shown, done.stderr
