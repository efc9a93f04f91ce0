"""Servers in their own processes for benchmarks and tests (so load generator and server do not
share a GIL): the sandbox, a Prefect server, and a Prefect load run against one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import TracebackType
from typing import Self

import httpx

from shipsync.orchestration.api_auth import PrefectApi
from shipsync.serving import stop_process, wait_until_answers
from shipsync_sandbox.serving import free_port


class SandboxProcess:
    """`shipsync sandbox serve` in a child process on a free loopback port."""

    def __init__(self, *args: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.api_url = f"{self.url}/v2"
        self._args = [sys.executable, "-m", "shipsync", "sandbox", "serve", "--port", str(self.port), *args]
        self._process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Self:
        env = {**os.environ, "PREFECT_SERVER_ANALYTICS_ENABLED": "false"}
        self._process = subprocess.Popen(self._args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        wait_until_answers(f"{self.url}/_admin/health", self._process, timeout_s=120)
        return self

    def stats(self, api_key: str = "sandbox-key-1") -> dict[str, object]:
        """What that key's requests did (the sandbox shows each account only its own counts)."""
        response = httpx.get(f"{self.url}/_admin/stats", headers={"Authorization": f"Token {api_key}"}, timeout=5)
        result: dict[str, object] = response.raise_for_status().json()
        return result

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._process is not None:
            stop_process(self._process)


class PrefectServerProcess:
    """`prefect server start` in a child process with a home of its own (SQLite there, or `database_url`)."""

    def __init__(self, home: Path, database_url: str | None = None, **env: str) -> None:
        from shipsync.orchestration.environment import prefect_env
        from shipsync.orchestration.server import server_command

        self.port = free_port()
        self.api_url = f"http://127.0.0.1:{self.port}/api"
        self.home = home
        self._command = server_command("127.0.0.1", self.port)
        self._env = prefect_env(home, database_url=database_url, extra=env)
        self._process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Self:
        with (self.home / "server.log").open("ab") as log:
            self._process = subprocess.Popen(self._command, env=self._env, stdout=log, stderr=subprocess.STDOUT, cwd=self.home)
        wait_until_answers(f"{self.api_url}/health", self._process, timeout_s=300)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._process is not None:
            stop_process(self._process)


def prefect_load(api: PrefectApi, home: Path, flows: int, requests: int, rate: str = "600/6") -> dict[str, float]:
    """Run `shipsync_bench.prefect_load` against a server in its own process; its figures."""
    import json

    from shipsync.orchestration.environment import prefect_env

    env = prefect_env(home / "client", extra=api.client_env())
    command = [sys.executable, "-m", "shipsync_bench.prefect_load", "--flows", str(flows), "--requests", str(requests), "--rate", rate]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"the Prefect load failed (exit {done.returncode}): {done.stderr[-1500:]}")
    figures: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


class UpProcess:
    """`shipsync up` in a child process on free ports: `start()` returns once everything is up."""

    def __init__(self, *args: str, env: dict[str, str], cwd: Path) -> None:
        self.prefect_port, self.receiver_port = free_port(), free_port()
        self.api_url = f"http://127.0.0.1:{self.prefect_port}/api"
        self.state_dir = Path(env.get("SHIPSYNC_STATE_DIR") or cwd / ".shipsync")
        self.receiver_url = f"http://127.0.0.1:{self.receiver_port}/webhook"
        self.command = [sys.executable, "-m", "shipsync", "up", "--prefect-port", str(self.prefect_port)]
        self.command += ["--receiver-port", str(self.receiver_port), *args]
        self.env, self.cwd = env, cwd
        self.lines: list[str] = []
        self.process: subprocess.Popen[str] | None = None

    @property
    def output(self) -> str:
        return "\n".join(self.lines)

    @property
    def prefect_api(self) -> PrefectApi:
        """Its Prefect API with the credential up keeps in its state folder (once up has started; none
        if up keeps none)."""
        from shipsync.orchestration.api_auth import CREDENTIAL_FILE
        from shipsync.orchestration.state import StateDir

        kept = StateDir(self.state_dir.resolve()).prefect_home / CREDENTIAL_FILE
        return PrefectApi(self.api_url, kept.read_text().strip() if kept.exists() else None)

    def start(self, timeout_s: float = 900) -> Self:
        import threading
        import time

        self.lines = []
        process = subprocess.Popen(
            self.command, env=self.env, cwd=self.cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
        )
        self.process = process
        assert process.stdout is not None
        stdout = process.stdout
        threading.Thread(target=lambda: self.lines.extend(line.rstrip("\n") for line in stdout), daemon=True).start()
        deadline = time.monotonic() + timeout_s
        while not any("everything is up" in line for line in self.lines):
            if process.poll() is not None or time.monotonic() > deadline:
                stop_process(process)
                raise RuntimeError(f"shipsync up did not come up (exit {process.returncode}):\n{self.output[-3000:]}")
            time.sleep(0.2)
        return self

    def stop(self, timeout_s: float = 60) -> float | None:
        """SIGTERM, as an operator's Ctrl-C or service manager would; seconds until up exited, None if
        it had to be killed after `timeout_s` (its children with it)."""
        import signal
        import time

        if self.process is None or self.process.poll() is not None:
            return 0.0
        asked = time.monotonic()
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            stop_process(self.process, 0, group=True)
            return None
        return time.monotonic() - asked
