"""The sandbox stands apart from the client it checks (issue 26, item 1): its service code imports
nothing of `shipsync` (only its CLI plugin, `cli.py`, uses `shipsync.cli.common`), so its rules
are its own, written from the service's reference; and its modules import each other without a
circle. Every import counts, at any depth (inside functions, under TYPE_CHECKING)."""

from __future__ import annotations

import ast
from pathlib import Path

import shipsync_sandbox

PACKAGE = Path(shipsync_sandbox.__file__).parent
CLI_MAY_USE = {"shipsync.cli.common"}


def imported_modules(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def modules() -> dict[str, set[str]]:
    return {path.stem: imported_modules(path) for path in sorted(PACKAGE.glob("*.py"))}


def sandbox_graph() -> dict[str, set[str]]:
    """Module -> the sandbox's own modules it imports."""
    names = set(modules())
    return {
        module: {part for name in imports for part in [name.removeprefix("shipsync_sandbox.").split(".")[0]] if part in names} - {module}
        for module, imports in modules().items()
    }


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected set of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_sandbox_module_but_its_cli_imports_shipsync() -> None:
    offending = {
        module: sorted(name for name in imports if name == "shipsync" or name.startswith("shipsync."))
        for module, imports in modules().items()
    }
    cli = offending.pop("cli")
    assert {m: names for m, names in offending.items() if names} == {}
    assert [name for name in cli if not any(name == m or name.startswith(f"{m}.") for m in CLI_MAY_USE)] == []


def test_the_sandbox_modules_import_each_other_without_a_circle() -> None:
    assert circles(sandbox_graph()) == []


def test_the_circle_finder_finds_a_circle() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
