"""Every entry point masks secrets in every log record, with DEBUG logging of httpx and Prefect on:
the CLI, the receiver, the sandbox and a flow run, each in a fresh process (where nothing else
could have installed the redaction), each fed a real log line that carries a secret."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import httpx
import orjson
import pytest

from shipsync.serving import stop_process, wait_until_answers
from shipsync.webhooks.signature import sign
from shipsync_sandbox.serving import free_port
from support.sandboxes import SandboxFactory
from support.waiting import HANG_S, wait_for

KEY = "logcanary-api-key-7d3f1a"
SECRET = "whsec-logcanary-5e8c2b91"
# Each test starts a fresh Python process (the point: nothing else installed the redaction there).
pytestmark = pytest.mark.slow


def environment(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "SHIPSYNC_WAREHOUSE": str(tmp_path / "w"), "PREFECT_SERVER_ANALYTICS_ENABLED": "false", **extra}


def test_the_cli_masks_a_key_in_httpx_debug_lines(make_sandbox: SandboxFactory, tmp_path: Path) -> None:
    sandbox = make_sandbox(api_keys=(KEY,))
    env = environment(tmp_path, SHIPSYNC_API_URL=sandbox.api_url, SHIPSYNC_API_KEY=KEY, SHIPSYNC_RATE_LIMIT="0")
    # An id that is the key itself: httpx logs the URL that carries it.
    command = [sys.executable, "-m", "shipsync", "--log-level", "debug", "pull", "documents", "--id", KEY]
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=HANG_S)
    assert "HTTP Request" in result.stderr and "httpcore" in result.stderr  # DEBUG lines were logged
    assert KEY not in result.stderr and "documents/***" in result.stderr


def test_the_receiver_masks_a_secret_in_its_delivery_log(tmp_path: Path) -> None:
    port = free_port()
    env = environment(tmp_path, SHIPSYNC_WEBHOOK_SECRETS=SECRET)
    command = [sys.executable, "-m", "shipsync", "--log-level", "debug", "webhooks", "serve", "--port", str(port)]
    command += ["--spool", str(tmp_path / "spool")]
    log = tmp_path / "stderr.log"
    with log.open("w") as stderr_file:
        process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=stderr_file, text=True)
    try:
        wait_until_answers(f"http://127.0.0.1:{port}/healthz", process)  # type: ignore[arg-type]
        body = orjson.dumps({"data": {"id": f"id-with-{SECRET}", "type": "webhook_notification", "attributes": {"event": "x"}}})
        response = httpx.post(f"http://127.0.0.1:{port}/webhook", content=body, headers={"X-T49-Webhook-Signature": sign(SECRET, body)})
        assert response.status_code == 200
        wait_for(lambda: "delivery event=x" in log.read_text(), "the delivery log line")  # written in batches, every 50 ms
    finally:
        stop_process(process)
    stderr = log.read_text()
    assert "delivery event=x id=id-with-*** -> 200 stored" in stderr and SECRET not in stderr


def test_the_sandbox_masks_its_keys_in_its_access_log(tmp_path: Path) -> None:
    port = free_port()
    command = [sys.executable, "-m", "shipsync", "sandbox", "serve", "--port", str(port), "--api-key", KEY, "--documents", "2"]
    out, err = tmp_path / "stdout.log", tmp_path / "stderr.log"
    with out.open("w") as stdout_file, err.open("w") as stderr_file:
        process = subprocess.Popen(command, env=environment(tmp_path), stdout=stdout_file, stderr=stderr_file, text=True)
    try:
        wait_until_answers(f"http://127.0.0.1:{port}/_admin/health", process)  # type: ignore[arg-type]
        httpx.get(f"http://127.0.0.1:{port}/v2/documents/{KEY}", headers={"Authorization": f"Token {KEY}"})
        wait_for(lambda: "GET /v2/documents/" in out.read_text(), "the access log line")
    finally:
        stop_process(process)
    stdout, stderr = out.read_text(), err.read_text()
    assert "GET /v2/documents/*** 404" in stdout and KEY not in stdout.split("keys:")[-1].split("\n", 1)[-1] + stderr


def test_a_flow_run_masks_the_key_with_prefect_and_httpx_at_debug(make_sandbox: SandboxFactory, tmp_path: Path) -> None:
    sandbox = make_sandbox(api_keys=(KEY,))
    env = environment(
        tmp_path,
        SHIPSYNC_API_URL=sandbox.api_url,
        SHIPSYNC_API_KEY=KEY,
        SHIPSYNC_RATE_LIMIT="0",
        PREFECT_LOGGING_LEVEL="DEBUG",
        PREFECT_LOGGING_EXTRA_LOGGERS="httpx",
        PREFECT_HOME=str(tmp_path / "prefect"),
    )
    script = textwrap.dedent(
        f"""
        import asyncio, logging
        logging.basicConfig(level=logging.DEBUG)  # a handler of the script's own, before any flow
        from prefect.testing.utilities import prefect_test_harness
        from flows.pull import pull_documents
        with prefect_test_harness(server_startup_timeout=600):
            asyncio.run(pull_documents(ids=[{KEY!r}]))
        """
    )
    # A Prefect server started, a flow run, the server stopped: a minute at most on an idle machine,
    # several on a busy one. The bound is a hang guard; its failure shows where the child was.
    try:
        result = subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=2 * HANG_S, cwd=Path(__file__).parents[2]
        )
    except subprocess.TimeoutExpired as exc:
        said = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else exc.stderr or ""
        raise AssertionError(f"hang guard: the flow run's process was still running after {2 * HANG_S:.0f} s:\n{said[-3000:]}") from None
    assert result.returncode == 0, result.stderr[-2000:]
    assert "HTTP Request" in result.stderr and "prefect" in result.stderr.lower()
    assert KEY not in result.stderr + result.stdout
