"""Doctests of Python modules, as pytest's ``--doctest-modules`` collects them (from a project's ``addopts``).

Each docstring with examples in a module is one test named as pytest names it (``pkg.mod.Class.method``),
run by the standard library's :class:`doctest.DocTestRunner` with the project's ``doctest_optionflags``. A
failing example fails the test with doctest's own report (expected and got). Why the standard library's
runner: doctest semantics (output comparison, option flags, ``...``) are its own, and pytest uses it too.
"""

from __future__ import annotations

import doctest
import types
from collections.abc import Callable

from rt.events import Location
from rt_testrunner.model import Suite, TestCase
from rt_testrunner.pyconfig import PytestConfig

#: pytest's own flags, which change nothing on Python 3 (ALLOW_UNICODE, ALLOW_BYTES) or are not supported
#: (NUMBER): accepted so that a configuration naming them still runs
_PYTEST_FLAGS = frozenset({"ALLOW_UNICODE", "ALLOW_BYTES", "NUMBER"})


def optionflags(config: PytestConfig) -> int:
    """The ``doctest_optionflags`` ini value (pytest's default: ELLIPSIS) as doctest's bit flags."""
    flags = 0
    for name in config.args("doctest_optionflags", ("ELLIPSIS",)):
        if name in _PYTEST_FLAGS:
            continue
        flags |= doctest.OPTIONFLAGS_BY_NAME.get(name, 0)
    return flags


def add_doctests(module: types.ModuleType, root: Suite, flags: int, timeout_ms: int) -> None:
    """One test in ``root`` per docstring of ``module`` that has examples."""
    for test in doctest.DocTestFinder().find(module, module.__name__):
        if not test.examples:
            continue
        location = Location(test.filename, (test.lineno or 0) + 1, 1) if test.filename else None
        root.children.append(
            TestCase(test.name, _runner(test, flags), root, timeout=timeout_ms, location=location)
        )


def _runner(test: doctest.DocTest, flags: int) -> Callable[[], None]:
    def run_doctest() -> None:
        from rt_testrunner.builtin_fixtures import DOCTEST_NAMESPACE

        test.globs.update(DOCTEST_NAMESPACE)
        runner = doctest.DocTestRunner(verbose=False, optionflags=flags)
        report: list[str] = []
        result = runner.run(test, out=report.append, clear_globs=False)
        if result.failed:
            raise AssertionError("".join(report).strip() or f"{test.name}: {result.failed} example(s) failed")

    return run_doctest
