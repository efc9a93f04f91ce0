"""Shared fixtures: sandboxes on loopback ports, clients, and a Prefect test harness per session."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

# Prefect must not phone home, and its home must exist before it starts (see docs/development.md).
# The home is named with the process id: a run that is killed leaves a folder the product's sweep
# of ended processes' folders (`staged_files.sweep_orphans`) removes; a run that ends removes it.
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("DO_NOT_TRACK", "1")
_own_prefect_home: Path | None = None
if "PREFECT_HOME" not in os.environ:
    _own_prefect_home = Path(tempfile.mkdtemp(prefix=f"shipsync-prefect-{os.getpid()}-"))
    os.environ["PREFECT_HOME"] = str(_own_prefect_home)

from shipsync.config import Settings  # noqa: E402
from shipsync_sandbox import SandboxOptions, create_app  # noqa: E402
from shipsync_sandbox.serving import BackgroundServer  # noqa: E402
from support import hypothesis_profile  # noqa: E402
from support.run_folders import KEEP_VARIABLE, keep_requested, make_run_folder, memory_disk_usable, sweep_ended_runs  # noqa: E402
from support.sandboxes import K1, K2, PulledCopies, RunningSandbox, SandboxFactory, shipsync_env  # noqa: E402

# No hypothesis deadline and no too-slow health check anywhere (support/hypothesis_profile.py says why).
hypothesis_profile.load()


def pytest_configure(config: pytest.Config) -> None:
    """Temporary folders in memory (tmpfs) where the machine has one and no --basetemp was given:
    the tests write hundreds of DuckDB files, and each write's fsync on a real disk costs
    milliseconds of waiting (measured: a DuckDB write and close 40 ms on ext4, 24 ms on tmpfs).
    The files are as real; only their durability, which no test can observe, is not. The run's
    folder goes when the run ends, passed or failed: memory is shared with every other run on the
    machine. Folders of earlier runs whose process is gone (killed) go at the start."""
    if hasattr(config, "workerinput"):  # an xdist worker: the controller made and owns the folder
        return
    if config.option.basetemp is None and memory_disk_usable():
        sweep_ended_runs()
        config.option.basetemp = str(make_run_folder())
        config.stash[_memory_basetemp] = Path(config.option.basetemp)


_memory_basetemp = pytest.StashKey[Path]()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, exitstatus: int, config: pytest.Config) -> None:
    """Where a failed run's folders were, and how to keep them next time."""
    basetemp = config.stash.get(_memory_basetemp, None)
    if basetemp is None or exitstatus == 0:
        return
    if keep_requested():
        terminalreporter.write_line(f"temporary folders kept in memory: {basetemp} (remove it when done)")
    else:
        terminalreporter.write_line(
            f"temporary folders were in {basetemp}, removed at the end of the run; "
            f"{KEEP_VARIABLE}=1 keeps them there, --basetemp DIR keeps them on disk"
        )


def pytest_unconfigure(config: pytest.Config) -> None:
    """The in-memory folders go, whatever the outcome, unless the user asked to keep them; and this
    process's Prefect home goes with it."""
    basetemp = config.stash.get(_memory_basetemp, None)
    if basetemp is not None and not keep_requested():
        shutil.rmtree(basetemp, ignore_errors=True)
    if _own_prefect_home is not None:
        shutil.rmtree(_own_prefect_home, ignore_errors=True)


def pytest_report_header(config: pytest.Config) -> str | None:
    basetemp = config.stash.get(_memory_basetemp, None)
    return f"temporary folders in memory: {basetemp}" if basetemp is not None else None


def _sandboxes() -> Iterator[SandboxFactory]:
    servers: list[BackgroundServer] = []

    def factory(**options: object) -> RunningSandbox:
        options.setdefault("api_keys", (K1, K2))
        options.setdefault("documents", 30)
        options.setdefault("rate_limit", None)
        app = create_app(SandboxOptions(**options))  # type: ignore[arg-type]
        server = BackgroundServer(app).start()
        servers.append(server)
        return RunningSandbox(app, server)

    yield factory
    for server in servers:
        server.stop()


@pytest.fixture
def make_sandbox() -> Iterator[SandboxFactory]:
    yield from _sandboxes()


@pytest.fixture(scope="module")
def make_module_sandbox() -> Iterator[SandboxFactory]:
    """Sandboxes that live as long as the test module: for a module whose tests only read one
    pulled warehouse (see `module_env`)."""
    yield from _sandboxes()


@pytest.fixture(scope="module")
def module_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """For a module-scoped fixture, what the function-scoped autouse fixtures set for a test: a
    secrets store of its own. Returns a folder of the module's own."""
    root = tmp_path_factory.mktemp("module")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("SHIPSYNC_SECRETS_FILE", str(root / "config" / "shipsync" / "secrets.json"))
        yield root


@pytest.fixture
def sandbox(make_sandbox: SandboxFactory) -> RunningSandbox:
    return make_sandbox()


@pytest.fixture(scope="session")
def pulled_copies(tmp_path_factory: pytest.TempPathFactory) -> PulledCopies:
    return PulledCopies(tmp_path_factory.mktemp("pulled"))


@pytest.fixture
def pulled(sandbox: RunningSandbox, warehouse: Path, pulled_copies: PulledCopies) -> tuple[RunningSandbox, Settings]:
    """A sandbox (30 documents) and the settings of a warehouse that pulled them: for bulk writes."""
    return pulled_copies.pulled(sandbox, warehouse)


@pytest.fixture(autouse=True)
def secrets_file(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test's own webhook secrets store, never the user's (~/.config/shipsync)."""
    path = tmp_path_factory.mktemp("config") / "shipsync" / "secrets.json"
    monkeypatch.setenv("SHIPSYNC_SECRETS_FILE", str(path))
    return path


@pytest.fixture
def warehouse(tmp_path: Path) -> Path:
    """The test's own lake: a folder (its SQLite catalog and data files), made on first write."""
    return tmp_path / "warehouse"


@pytest.fixture(scope="session")
def prefect_harness() -> Iterator[None]:
    """One ephemeral Prefect API for the whole session (it takes ~10 s to start; the bound is a hang guard)."""
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=600):
        yield


@pytest.fixture
def flow_env(monkeypatch: pytest.MonkeyPatch, sandbox: RunningSandbox, warehouse: Path) -> Path:
    """SHIPSYNC_* pointing the flows at the sandbox and a fresh warehouse."""
    for name, value in shipsync_env(sandbox.api_url, warehouse, retry_base_delay="0.01").items():
        monkeypatch.setenv(name, value)
    return warehouse
