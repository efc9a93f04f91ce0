"""A headless Chromium driven over the Chrome DevTools Protocol, for the report's browser test.

Chromium's `--remote-debugging-pipe` speaks CDP over file descriptors 3 (commands in) and 4
(answers and events out), each message JSON ended by a NUL byte: no port, no websocket library,
no Playwright. `open_page` loads a file and reports what a person's browser would have done:
console errors, uncaught exceptions, every request it made, a DOM probe, a screenshot of the top
and the page printed to PDF. Debian's package is `chromium` (`apt-get install -y chromium`).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from support.waiting import HANG_S

INSTALL = "apt-get update && apt-get install -y chromium"
# The flags this machine needs: no sandbox as root, and no background calls to Google's hosts
# (refused on a closed network, they would only add noise and delay).
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-default-apps",
    "--remote-debugging-pipe",
)


def chromium_path() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@dataclass
class PageVisit:
    console_errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    probe: Any = None
    screenshot_png: bytes = b""
    pdf: bytes = b""


class _Pipe:
    def __init__(self, process: subprocess.Popen[bytes], write_fd: int, read_fd: int) -> None:
        self.process, self.write_fd, self.read_fd = process, write_fd, read_fd
        self.buffer = b""
        self.next_id = 0
        self.events: list[dict[str, Any]] = []

    def _read_message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self.buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([self.read_fd], [], [], remaining)[0]:
                raise TimeoutError("Chromium did not answer in time")
            chunk = os.read(self.read_fd, 1 << 20)
            if not chunk:
                raise RuntimeError(f"Chromium closed the pipe (exit {self.process.poll()})")
            self.buffer += chunk
        message, _, self.buffer = self.buffer.partition(b"\0")
        parsed: dict[str, Any] = json.loads(message)
        return parsed

    def call(self, method: str, params: dict[str, Any] | None = None, session: str | None = None, timeout: float = HANG_S) -> Any:
        self.next_id += 1
        message: dict[str, Any] = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self.write_fd, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            answer = self._read_message(deadline)
            if answer.get("id") == self.next_id:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer.get("result", {})
            self.events.append(answer)

    def wait_for(self, method: str, timeout: float = HANG_S) -> dict[str, Any]:
        for index, event in enumerate(self.events):
            if event.get("method") == method:
                return self.events.pop(index)
        deadline = time.monotonic() + timeout
        while True:
            event = self._read_message(deadline)
            if event.get("method") == method:
                return event
            self.events.append(event)


def _launch(executable: str, profile: str) -> _Pipe:
    commands_read, commands_write = os.pipe()
    answers_read, answers_write = os.pipe()

    def on_fds_3_and_4() -> None:
        os.dup2(commands_read, 3)
        os.dup2(answers_write, 4)

    process = subprocess.Popen(
        [executable, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=on_fds_3_and_4,
        pass_fds=(3, 4),
    )
    os.close(commands_read)
    os.close(answers_write)
    return _Pipe(process, commands_write, answers_read)


def _collect(pipe: _Pipe, visit: PageVisit) -> None:
    for event in pipe.events:
        method, params = event.get("method"), event.get("params", {})
        if method == "Network.requestWillBeSent":
            visit.requests.append(params["request"]["url"])
        elif method == "Runtime.consoleAPICalled" and params.get("type") in {"error", "assert"}:
            visit.console_errors.append(" ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", [])))
        elif method == "Runtime.exceptionThrown":
            visit.console_errors.append(str(params.get("exceptionDetails", {}).get("text")))
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            visit.console_errors.append(f"{params['entry'].get('source')}: {params['entry'].get('text')} {params['entry'].get('url', '')}")
    pipe.events.clear()


def open_page(path: Path, probe_js: str, *, width: int = 1280, height: int = 900) -> PageVisit:
    """Load `path` in headless Chromium; `probe_js` is an expression whose value (JSON) is returned."""
    executable = chromium_path()
    if executable is None:
        raise FileNotFoundError(f"chromium is not installed: {INSTALL}")
    visit = PageVisit()
    with tempfile.TemporaryDirectory(prefix="shipsync-chromium-") as profile:
        pipe = _launch(executable, profile)
        try:
            target = pipe.call("Target.createTarget", {"url": "about:blank"})["targetId"]
            session = pipe.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            for domain in ("Runtime", "Log", "Network", "Page"):
                pipe.call(f"{domain}.enable", session=session)
            pipe.call(
                "Emulation.setDeviceMetricsOverride",
                {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
                session=session,
            )
            pipe.events.clear()  # only what the report's page does counts
            pipe.call("Page.navigate", {"url": path.resolve().as_uri()}, session=session)
            pipe.wait_for("Page.loadEventFired")
            time.sleep(0.3)  # late console messages, if any, arrive just after load
            evaluated = pipe.call("Runtime.evaluate", {"expression": probe_js, "returnByValue": True}, session=session)
            visit.probe = evaluated.get("result", {}).get("value")
            shot = pipe.call("Page.captureScreenshot", {"format": "png"}, session=session)
            visit.screenshot_png = base64.b64decode(shot["data"])
            printed = pipe.call("Page.printToPDF", {"printBackground": True}, session=session)
            visit.pdf = base64.b64decode(printed["data"])
            _collect(pipe, visit)
            with contextlib.suppress(RuntimeError, TimeoutError):  # it may close the pipe before answering
                pipe.call("Browser.close", timeout=10)
        finally:
            os.close(pipe.write_fd)
            os.close(pipe.read_fd)
            try:
                pipe.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                pipe.process.kill()
                pipe.process.wait()
    return visit
