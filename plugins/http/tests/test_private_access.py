"""No rt_http module reaches into another's private members (issue 13: server, websocket, http11 and pubsub
talk through documented interfaces), checked by reading the source, so a new reach fails here.

The check is an AST scan with a simple rule: an ``obj._name`` access, where ``obj`` is not ``self``/``cls``,
is cross-module when the module that makes it defines no private member called ``_name`` itself (as a
function, class, slot, ``self._name = ...`` or class attribute). A ``from rt_http.x import _name`` is always
cross-module. What remains on purpose is in ``ALLOWED``, each with its reason; an entry that no longer
matches fails too, so the list only shrinks.
"""

from __future__ import annotations

import ast
from pathlib import Path

import rt_http

SOURCE = Path(rt_http.__file__).parent

# (module, the access as written) -> why it stays
ALLOWED: dict[tuple[str, str], str] = {
    ("http11.py", "Headers._trusted"): "the unchecked constructor for headers the parser already validated; "
    "private so that user code cannot skip the validation",
    ("messages.py", "Headers._trusted"): "as above, for the headers a Response makes itself",
    ("messages.py", "self.headers._items"): "a Response adds its own content-type without re-validating it",
    ("http11.py", "response._body"): "the wire writer sends a Response's buffered body; Response exposes its "
    "body only as the fetch API's stream",
    ("http11.py", "response._stream"): "as above, for a streamed body",
}


def _defined_private_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                names.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id == "__slots__":
                    names.update(
                        element.value
                        for element in ast.walk(node.value)
                        if isinstance(element, ast.Constant) and isinstance(element.value, str)
                    )
    return {name for name in names if _private(name)}


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def cross_module_private_accesses(source: Path = SOURCE) -> list[tuple[str, str, int]]:
    """(module, access as written, line) for every reach into another module's private member."""
    found: list[tuple[str, str, int]] = []
    for path in sorted(source.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        own = _defined_private_names(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and _private(node.attr):
                if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                    continue
                if node.attr not in own:
                    found.append((path.name, ast.unparse(node), node.lineno))
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("rt_http"):
                for alias in node.names:
                    if _private(alias.name):
                        found.append((path.name, f"from {node.module} import {alias.name}", node.lineno))
    return found


def test_no_module_reaches_into_another_modules_private_members() -> None:
    found = cross_module_private_accesses()
    unexpected = [
        f"{module}:{line}: {access}" for module, access, line in found if (module, access) not in ALLOWED
    ]
    assert not unexpected, "use (or add) a documented interface instead of: " + "; ".join(unexpected)
    stale = set(ALLOWED) - {(module, access) for module, access, _ in found}
    assert not stale, f"ALLOWED lists accesses that are gone (delete them): {sorted(stale)}"


def test_the_scan_finds_a_reach_into_a_private_member(tmp_path: Path) -> None:
    """The rule itself: what pubsub.py did before it had ``queue_frame`` is found; own members are not."""
    (tmp_path / "fanout.py").write_text(
        "def fan(ws, frame):\n    ws._send_frame(frame)\n    return ws._deflate\n", encoding="utf-8"
    )
    (tmp_path / "own.py").write_text(
        "class A:\n    __slots__ = ('_x',)\n    def f(self, other):\n        return other._x + self._y\n"
        "from rt_http.transports import _host\n",
        encoding="utf-8",
    )
    found = {(module, access) for module, access, _ in cross_module_private_accesses(tmp_path)}
    assert found == {
        ("fanout.py", "ws._send_frame"),
        ("fanout.py", "ws._deflate"),
        ("own.py", "from rt_http.transports import _host"),
    }
