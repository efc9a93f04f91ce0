"""`shipsync sandbox ...` as an operator meets it (issue 37, item 4): `serve` binds its port before
it says anything (a port in use is one line and no banner), `simulate` reaches the sandbox
SHIPSYNC_API_URL names, and the options' values are checked."""

from __future__ import annotations

import socket

from typer.testing import CliRunner

from shipsync.cli.main import app as shipsync
from shipsync_sandbox import SandboxOptions, create_app
from shipsync_sandbox.serving import BackgroundServer
from support.sandboxes import K1

RUNNER = CliRunner()


def test_a_port_in_use_is_one_line_and_no_banner() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = RUNNER.invoke(shipsync, ["sandbox", "serve", "--port", str(port), "--documents", "1"])
    assert result.exit_code == 1
    assert "sandbox: http" not in result.stdout  # no banner for a sandbox that is not there
    (error,) = result.stderr.strip().splitlines()
    assert error.startswith("error: sandbox: cannot listen on 127.0.0.1:") and str(port) in error


def test_simulate_reaches_the_sandbox_the_api_url_names() -> None:
    app = create_app(SandboxOptions(api_keys=(K1,), documents=4))
    with BackgroundServer(app) as server:
        environment = {"SHIPSYNC_API_URL": f"{server.url}/v2", "SHIPSYNC_API_KEY": K1}
        result = RUNNER.invoke(shipsync, ["sandbox", "simulate", "--containers", "2"], env=environment)
        assert result.exit_code == 0, result.output
        assert result.stdout.startswith("simulated ") and not result.stdout.startswith("simulated 0 ")


def test_options_are_checked_before_anything_starts() -> None:
    for args in (["--listing-order", "random"], ["--create-limit", "fast"], ["--rate-limit", "1/0"]):
        result = RUNNER.invoke(shipsync, ["sandbox", "serve", "--port", "1", *args])
        assert result.exit_code == 2 and "sandbox: http" not in result.stdout, (args, result.output)
