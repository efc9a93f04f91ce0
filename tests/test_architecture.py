"""The house drawn from its imports: every `import` and `from ... import` in every module of
`src/shipsync` (inside functions and `if TYPE_CHECKING:` blocks too), read from the source; and
what it holds: nothing that only the tests, the benchmarks or the demo use.

The product imports none of the lab; only `orchestration` imports Prefect; no module imports, however
indirectly, one that imports it back; and no arrow runs up the floors, which follow the design:

    cli, __main__                         the command line
    orchestration                         Prefect: flow runs, deployments, `shipsync up`
    report                                the HTML report
    pull, bulk, webhooks                  what moves data between the service and the warehouse
    warehouse                             the warehouse
    config                                settings, read once at the edge and passed down
    api                                   the service's client (it is given plain values)
    errors, redaction, values, ...        the base: no project module above it

A failure names every offending edge, `importer -> imported`, or every name the product defines
for others only, with who uses it.
"""

from __future__ import annotations

import ast
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PRODUCT = ROOT / "src" / "shipsync"
LAB = ("shipsync_sandbox", "shipsync_bench", "shipsync_demo")

# Bottom first. A module's floor is that of its first name under `shipsync`.
FLOORS: tuple[frozenset[str], ...] = (
    frozenset(
        {
            "",
            "errors",
            "redaction",
            "json_text",
            "iso6346",
            "patterns",
            "values",
            "safe_files",
            "logsetup",
            "serving",
            "warehouse_location",
            "plain_text",
        }
    ),
    frozenset({"api"}),
    frozenset({"config"}),
    frozenset({"warehouse"}),
    frozenset({"pull", "bulk", "webhooks"}),
    frozenset({"report"}),
    frozenset({"orchestration"}),
    frozenset({"cli", "__main__"}),
)


@dataclass(frozen=True)
class Import:
    importer: str
    imported: str  # a product module, or the top-level name of anything else
    line: int

    def __str__(self) -> str:
        return f"{self.importer} -> {self.imported} (line {self.line})"


def module_name(path: Path) -> str:
    parts = path.relative_to(PRODUCT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(PRODUCT.rglob("*.py"))}


def _resolve(name: str) -> str:
    """The product module `name` names (its longest prefix that is one), else its top-level name."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        if ".".join(parts[:end]) in modules():
            return ".".join(parts[:end])
    return parts[0]


def imports_of(module: str, path: Path) -> Iterator[Import]:
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(module, _resolve(alias.name), node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            else:
                base = node.module or ""
            for alias in node.names:
                # `from shipsync import patterns` imports the module shipsync.patterns; `from
                # shipsync.config import Settings`, the module shipsync.config.
                yield Import(module, _resolve(f"{base}.{alias.name}"), node.lineno)


@cache
def graph() -> tuple[Import, ...]:
    found = {imp for module, path in modules().items() for imp in imports_of(module, path) if imp.imported != module}
    return tuple(sorted(found, key=lambda imp: (imp.importer, imp.imported, imp.line)))


def internal_edges() -> set[tuple[str, str]]:
    return {(imp.importer, imp.imported) for imp in graph() if imp.imported in modules()}


def floor_of(module: str) -> int:
    first = module.split(".")[1] if "." in module else ""
    for number, names in enumerate(FLOORS):
        if first in names:
            return number
    raise AssertionError(f"{module} is on no floor: add `{first}` to FLOORS where the design puts it")


def circles(edges: set[tuple[str, str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    successors: dict[str, list[str]] = {}
    for importer, imported in edges:
        successors.setdefault(importer, []).append(imported)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for successor in successors.get(node, []):
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(successors):
        if node not in index:
            visit(node)
    return found


def test_the_graph_is_read_from_every_module() -> None:
    # A sanity check of the reader itself: imports inside functions and relative imports are seen.
    edges = internal_edges()
    assert ("shipsync.cli.up_cmd", "shipsync.orchestration.up") in edges  # imported inside a function
    assert ("shipsync.values", "shipsync.patterns") in edges  # `from shipsync import patterns`


def test_the_product_imports_nothing_of_the_lab() -> None:
    offending = [str(imp) for imp in graph() if imp.imported in LAB]
    assert not offending, "the product imports the lab:\n" + "\n".join(offending)


def test_only_orchestration_imports_prefect() -> None:
    offending = [str(imp) for imp in graph() if imp.imported == "prefect" and not imp.importer.startswith("shipsync.orchestration")]
    assert not offending, "Prefect imported outside shipsync.orchestration:\n" + "\n".join(offending)


def test_no_module_imports_itself_back() -> None:
    found = circles(internal_edges())
    described = []
    for component in found:
        members = set(component)
        edges = sorted(f"  {a} -> {b}" for a, b in internal_edges() if a in members and b in members)
        described.append(f"{len(component)} modules in a circle:\n" + "\n".join(edges))
    assert not found, "\n".join(described)


def test_no_arrow_runs_back_up_the_floors() -> None:
    upward = [str(imp) for imp in graph() if imp.imported in modules() and floor_of(imp.importer) < floor_of(imp.imported)]
    assert not upward, "arrows running up the floors (importer -> imported):\n" + "\n".join(upward)


# Public names the product defines for others to use: none yet. Each entry says who its user is.
PUBLIC_API: dict[str, str] = {}


@dataclass(frozen=True)
class Definition:
    module: str
    name: str
    line: int

    def __str__(self) -> str:
        return f"{self.module}.{self.name} (line {self.line})"


def _registered(node: ast.stmt) -> bool:
    """Found without being named: a decorated function or class (a command, a flow, a task), or a
    SQLModel table (its class is read from the metadata)."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.decorator_list:
        return True
    return isinstance(node, ast.ClassDef) and any(
        k.arg == "table" and isinstance(k.value, ast.Constant) and k.value.value is True for k in node.keywords
    )


def public_definitions(module: str, path: Path) -> Iterator[Definition]:
    """The public names a module defines at its top level (functions, classes, constants)."""
    for node in ast.parse(path.read_text(), str(path)).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names = [node.name]
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [t.id for t in targets if isinstance(t, ast.Name)]
        else:
            continue
        if not _registered(node):
            yield from (Definition(module, name, node.lineno) for name in names if not name.startswith("_") and name != "__all__")


def names_read(paths: list[Path]) -> set[str]:
    """Every name the code at `paths` reads: a variable, an attribute (`module.name`), an import
    that is not used does not count."""
    found: set[str] = set()
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                found.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                found.add(node.attr)
    return found


def exported() -> set[str]:
    """What a package lists in `__all__`, and the console scripts' functions (pyproject.toml)."""
    names: set[str] = set()
    for path in PRODUCT.rglob("__init__.py"):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
                names |= {e.value for e in ast.walk(node.value) if isinstance(e, ast.Constant) and isinstance(e.value, str)}
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    return names | {target.rpartition(":")[2] for target in scripts.values()}


def test_the_product_holds_nothing_only_tests_benchmarks_or_the_demo_use() -> None:
    """Every public name `src/shipsync` defines is read by the product itself or its flows, or is
    exported (`__all__`, a console script) or listed in PUBLIC_API. A helper for tests goes to
    `tests/support`, one for the lab to its package, and dead code goes."""
    used = names_read([*PRODUCT.rglob("*.py"), *(ROOT / "flows").rglob("*.py")]) | exported() | set(PUBLIC_API)
    others = {
        where: names_read(list((ROOT / where).rglob("*.py"))) for where in ("tests", "src/lab/sandbox", "src/lab/bench", "src/lab/demo")
    }
    unused = [d for module, path in modules().items() for d in public_definitions(module, path) if d.name not in used]
    described = [f"{d}: used by {', '.join(w for w, names in others.items() if d.name in names) or 'nobody'}" for d in unused]
    assert not unused, "defined in the product for others only (move it to them) or for nobody (delete it):\n" + "\n".join(described)
