"""Collection: loading a test file and turning what it declares into a tree of suites and tests.

A file declares tests through ``rt.test`` (registered into the suite on top of the collector's stack while it
loads) and as plain pytest-style ``def test_*()`` functions, which join the file's root suite in source order.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rt.events import Location

from rt_testrunner import api
from rt_testrunner.discovery import TestFile
from rt_testrunner.model import Suite, TestCase
from rt_testrunner.rewrite import load_test_module


def load_file(test_file: TestFile) -> Suite:
    """The suite tree of one file; the file's own exceptions (syntax, import errors) propagate."""
    root = Suite(None)
    api.REGISTERED_FUNCTIONS.clear()
    with api.collecting_into(root):
        module = load_test_module(test_file.path, test_file.relative)
    add_plain_functions(root, module.__dict__, module.__name__)
    return root


def load_preload(path: Path, into: Suite) -> None:
    """Run a ``--preload`` script; the hooks it declares at top level go to ``into`` (the run's root)."""
    api.REGISTERED_FUNCTIONS.clear()
    with api.collecting_into(into):
        load_test_module(path, f"preload/{path.name}")


def _required_parameters(fn: Callable[..., Any]) -> list[str]:
    """Parameters without defaults (read from the code object: ``inspect.signature`` is slow per test)."""
    code = fn.__code__
    positional = code.co_varnames[:code.co_argcount]
    required = list(positional[:len(positional) - len(fn.__defaults__ or ())])
    keyword_only = code.co_varnames[code.co_argcount:code.co_argcount + code.co_kwonlyargcount]
    required.extend(name for name in keyword_only if name not in (fn.__kwdefaults__ or {}))
    return required


def _plain_function_fails(name: str, params: list[str]) -> Callable[[], None]:
    def fail() -> None:
        raise TypeError(
            f"{name}() takes arguments ({', '.join(params)}): rt test does not provide pytest fixtures; "
            "use before_each/after_each hooks or test.each instead"
        )

    return fail


def add_plain_functions(root: Suite, namespace: dict[str, Any], module_name: str) -> None:
    """pytest-style ``def test_*()`` functions of the file join its root suite, in source order."""
    added = False
    for name, value in list(namespace.items()):
        if not name.startswith("test_") or not inspect.isfunction(value):
            continue
        if value.__module__ != module_name or id(value) in api.REGISTERED_FUNCTIONS:
            continue
        code = value.__code__
        params = _required_parameters(value)
        fn = value if not params else _plain_function_fails(name, params)
        root.children.append(TestCase(name, fn, root, frozenset(), (), None, None,
                                      Location(code.co_filename, code.co_firstlineno, 1)))
        added = True
    if not added:
        return

    def line(child: TestCase | Suite) -> int:
        if isinstance(child, TestCase):
            return child.location.line if child.location else 0
        tests = child.tests()
        return min((t.location.line for t in tests if t.location), default=0)

    root.children.sort(key=line)
