"""The standard library modules pytest's start-up leaves imported that a suite may use without importing them.

pytest imports all its own plugins at start-up, and what they import stays in ``sys.modules``; a submodule of
a package is then an attribute of that package, so a suite can reach it after a bare import of the package:
Faker 40.63.0's ``test_xml`` calls ``xml.etree.ElementTree`` after ``import xml``, which works under pytest
only because pytest's junitxml plugin imported ``xml.etree.ElementTree``. A top-level module cannot be leaned
on so (a test must import it to name it), nor a submodule its package imports itself (``import unittest``
gives ``unittest.case``). rt imports pytest's plugin modules only for the suites that need them (pytester):
all of them cost 16 to 60 ms of a run. Of the submodules they leave, ``import pytest`` itself imports all but
``xml.etree.ElementTree`` (1.3 ms), and the header pytest prints (not under ``-q``) reads pluggy's version
from its metadata, which imports ``email.parser`` (0.5 ms); tests/test_pytest_startup_modules.py compares the
two runners' lists. These are imported when a pytest suite starts
(:meth:`rt_testrunner.pysession.PytestSession.load_plugins`).
"""

from __future__ import annotations

import importlib
from collections.abc import Set

#: pytest's own plugin -> the standard library modules it imports that ``import pytest`` does not
LEFT_BY_PYTEST_PLUGINS = {"junitxml": ("xml.etree.ElementTree",), "terminal": ("email.parser",)}


def import_left_by_pytest(blocked: Set[str]) -> None:
    """Import what pytest's plugins leave imported, but for a plugin ``-p no:NAME`` blocks (pytest does not
    import a blocked plugin)."""
    for plugin, modules in LEFT_BY_PYTEST_PLUGINS.items():
        if plugin not in blocked:
            for name in modules:
                importlib.import_module(name)
