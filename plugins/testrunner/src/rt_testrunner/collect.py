"""Collection: loading a test file and turning what it declares into a tree of suites and tests.

A file declares tests through ``rt.test`` (registered into the suite on top of the collector's stack while it
loads) and as pytest does (:mod:`rt_testrunner.pyitems`): ``test*`` functions, ``Test*`` classes and
``unittest.TestCase`` classes, with fixtures, marks and parametrization.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from rt_testrunner import api, importing
from rt_testrunner.discovery import TestFile
from rt_testrunner.model import Suite, TestCase
from rt_testrunner.pyitems import NO_TIMEOUT_MS, PytestSession
from rt_testrunner.rewrite import load_test_module


def load_file(test_file: TestFile, session: PytestSession, reload: bool = False) -> Suite:
    """The suite tree of one file; the file's own exceptions (syntax, import errors) propagate.

    The file's conftest.py files load first. A file whose name is a Python identifier is imported under its
    real name (pytest's rules, :mod:`rt_testrunner.importing`); ``math.test.py`` cannot be, and runs as a
    module of a made-up name. Its pytest-style tests (functions, classes, unittest) are collected after the
    ``rt.test`` declarations it made while loading, and both are then put in source order.
    """
    root = Suite(None)
    if not session.load_conftests(test_file.path.parent) or session.is_ignored(test_file.path):
        return root
    api.REGISTERED_FUNCTIONS.clear()
    with api.collecting_into(root):
        if importing.importable(test_file.path):
            if reload:
                importing.forget(test_file.path)
            module = importing.import_path(test_file.path)
        else:
            module = load_test_module(test_file.path, test_file.relative)
    if test_file.doctest_only:
        _add_doctests(module, root, session)
        return root
    declared = bool(root.children)
    session.collect(module, root, str(test_file.path), test_file.selectors, set(api.REGISTERED_FUNCTIONS))
    if declared:
        root.children.sort(key=_first_line)
    if session.pyconfig.doctest_modules and not test_file.selectors:
        _add_doctests(module, root, session)
    return root


def _add_doctests(module: ModuleType, root: Suite, session: PytestSession) -> None:
    """``--doctest-modules`` (in the project's addopts): the module's doctests are tests of the file too."""
    from rt_testrunner import doctests

    doctests.add_doctests(module, root, doctests.optionflags(session.pyconfig), NO_TIMEOUT_MS)


def _first_line(child: TestCase | Suite) -> int:
    if isinstance(child, TestCase):
        return child.location.line if child.location else 0
    return min((t.location.line for t in child.tests() if t.location), default=0)


def load_preload(path: Path, into: Suite) -> None:
    """Run a ``--preload`` script; the hooks it declares at top level go to ``into`` (the run's root)."""
    api.REGISTERED_FUNCTIONS.clear()
    with api.collecting_into(into):
        load_test_module(path, f"preload/{path.name}")
