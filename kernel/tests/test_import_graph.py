"""The kernel's modules import each other without a circle, counting imports made only for type checking
(``if TYPE_CHECKING:``) and inside functions: a circle there is one refactoring away from an ImportError, and
it is what made ``rt.interfaces`` (which every plugin imports) depend on the kernel that loads the plugins."""

from __future__ import annotations

import ast
from pathlib import Path

import rt

PACKAGE = Path(rt.__file__).parent


def _module_name(path: Path) -> str:
    parts = ["rt", *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, modules: set[str]) -> set[str]:
    """The rt modules ``path`` imports anywhere in its body (``from rt import X`` counts as ``rt.X`` when X is
    a module, else as ``rt`` itself)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in modules)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "rt":
                for alias in node.names:
                    found.add(f"rt.{alias.name}" if f"rt.{alias.name}" in modules else "rt")
            elif node.module in modules:
                found.add(node.module)
    return found


def import_graph() -> dict[str, set[str]]:
    files = {_module_name(path): path for path in PACKAGE.rglob("*.py")}
    modules = set(files)
    return {name: _imports(path, modules) - {name} for name, path in files.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == 1:
                return [*path[path.index(target) :], target]
            if target not in state and (cycle := visit(target)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_the_graph_is_read():
    graph = import_graph()
    assert "rt.config" in graph["rt.interfaces"]
    assert "rt.interfaces" in graph["rt.plugins"]


def test_no_import_circle_in_the_kernel():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import circle: " + " -> ".join(cycle or [])


def test_the_detector_finds_a_circle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
