"""Servers in their own processes for benchmarks, so load generator and server do not share a GIL."""

from __future__ import annotations

import os
import subprocess
import sys
from types import TracebackType
from typing import Self

import httpx

from shipsync.serving import free_port, stop_process, wait_until_answers


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

    def stats(self) -> dict[str, object]:
        result: dict[str, object] = httpx.get(f"{self.url}/_admin/stats", timeout=5).json()
        return result

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._process is not None:
            stop_process(self._process)
