"""Whether an option a conftest.py registers takes a value, known before any conftest.py is imported.

``rt test --basedir tests``: rt picks its test paths before the conftest.py files load (they are loaded
while collecting), so it cannot ask the option itself whether ``tests`` is its value or a test path. pytest
parses its command line once its initial conftest.py files have registered their options, so ``tests`` is
``--basedir``'s value there. rt reads the ``parser.addoption(...)`` calls of those conftest.py files' source
(parsed, never run): an option registered without a flag action (``store_true``, ``count`` ...) or
``nargs=0`` takes the word after it, whatever that word names.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

#: argparse's actions that take no value
_FLAG_ACTIONS = frozenset(
    {"store_true", "store_false", "store_const", "append_const", "count", "help", "version"}
)


def takes_value(option: str, conftests: Iterable[Path]) -> bool:
    """``option`` (``--basedir``) is registered by one of ``conftests`` with an action that takes a value."""
    for path in conftests:
        try:
            tree = ast.parse(path.read_bytes(), str(path))
        except (OSError, SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if _registers(node, option):
                assert isinstance(node, ast.Call)
                return _valued(node)
    return False


def _registers(node: ast.AST, option: str) -> bool:
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return False
    if node.func.attr not in ("addoption", "_addoption"):
        return False
    return any(isinstance(arg, ast.Constant) and arg.value == option for arg in node.args)


def _valued(call: ast.Call) -> bool:
    for keyword in call.keywords:
        value = keyword.value
        if keyword.arg == "action" and isinstance(value, ast.Constant) and value.value in _FLAG_ACTIONS:
            return False
        if keyword.arg == "nargs" and isinstance(value, ast.Constant) and value.value == 0:
            return False
    return True
