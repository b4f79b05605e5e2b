"""Whether a ``pytest_collect_file`` hook picks its files by the suffixes it leaves out.

rt hands such a hook only the files whose suffixes its source names (:func:`rt_testrunner.discovery.
claims_in_source`), as most hooks name what they take (``if file_path.suffix == ".yaml"``). A hook that names
what it does not take (pygments 2.21.0's examplefiles: ``if file_path.suffix != '.output' and file_path.name
!= 'conftest.py'``) takes every other file, as pytest hands it every file: its named suffixes are the wrong
answer, and only "every file" is right. Read from the hook's syntax tree, so that a suffix compared with
``!=``, ``not in`` or under ``not`` counts as left out, and ``if suffix == ".output": return`` too, while
``if suffix != ".yaml": return`` (leaving out all but one) still names what the hook takes."""

from __future__ import annotations

import ast
import re

_SUFFIX = re.compile(r"\.[A-Za-z0-9_]+$")


def leaves_out_suffixes(text: str) -> bool:
    """``text`` (a conftest.py's or a plugin's source) has a ``pytest_collect_file`` hook that takes every
    file but those of some suffixes (or names)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return any(
        isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.name == "pytest_collect_file"
        and _leaves_out(node)
        for node in ast.walk(tree)
    )


def _leaves_out(hook: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    kept_tests: set[int] = set()
    for node in ast.walk(hook):
        if not (isinstance(node, ast.If) and not node.orelse and _only_exits(node.body)):
            continue
        if _has_negation(node.test):
            # ``if suffix != ".yaml": return``: every file but those is left out, the hook takes ".yaml"
            kept_tests.update(id(inner) for inner in ast.walk(node.test))
        elif _names_a_suffix(node.test):
            return True  # ``if suffix == ".output": return``: every other file is taken
    return any(id(node) not in kept_tests and _is_negation(node) for node in ast.walk(hook))


def _only_exits(body: list[ast.stmt]) -> bool:
    """A block that gives nothing back: ``return``, ``return None``, ``continue``, ``pass``."""
    return all(
        isinstance(statement, (ast.Continue, ast.Pass))
        or (
            isinstance(statement, ast.Return)
            and (
                statement.value is None
                or (isinstance(statement.value, ast.Constant) and statement.value.value is None)
            )
        )
        for statement in body
    )


def _is_negation(node: ast.AST) -> bool:
    """``x != ".output"``, ``x not in (".output",)`` or ``not name.endswith(".output")``."""
    if isinstance(node, ast.Compare):
        return any(isinstance(op, (ast.NotEq, ast.NotIn)) for op in node.ops) and _names_a_suffix(node)
    return isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not) and _names_a_suffix(node.operand)


def _has_negation(node: ast.AST) -> bool:
    return any(_is_negation(inner) for inner in ast.walk(node))


def _names_a_suffix(node: ast.AST) -> bool:
    return any(
        isinstance(inner, ast.Constant)
        and isinstance(inner.value, str)
        and _SUFFIX.search(inner.value) is not None
        for inner in ast.walk(node)
    )
