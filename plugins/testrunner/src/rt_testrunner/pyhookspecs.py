"""A conftest.py's hooks checked against pytest's hook specifications, as pluggy checks them when pytest
registers the conftest.py as a plugin.

pluggy refuses a hook implementation that declares an argument (one without a default value) its
specification does not have, with ``PluginValidationError``; pytest then fails to collect the conftest.py's
folder. Suites written for an older pytest meet this: pytest 9 dropped the ``py.path`` ``path`` argument of
``pytest_ignore_collect``, ``pytest_collect_file`` and ``pytest_pycollect_makemodule``, so a conftest.py with
``def pytest_collect_file(path, parent)`` no longer loads. Without this check rt would call such a hook with
the arguments it has and report a ``TypeError`` from deep inside the run, or run a suite pytest refuses.

The specifications are the installed pytest's own (``_pytest.hookspec``), so the check follows the version
the suite runs with; without pytest installed nothing is checked. Hooks pytest does not specify (those of
installed plugins' ``pytest_addhooks``) are not checked: pytest reports those only after collection.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rt_testrunner.fixtures import argnames

#: pytest's hook names -> the argument names of their specifications; None when pytest is not installed
_SPECS: dict[str, frozenset[str]] | None = None
_LOADED = False


def check(module: types.ModuleType, path: Path) -> None:
    """Raise pluggy's ``PluginValidationError`` (with pluggy's message) for the first hook of conftest.py
    ``module`` that declares an argument pytest's specification of that hook does not have."""
    names = [name for name in vars(module) if name.startswith("pytest_") and name != "pytest_plugins"]
    if not names:
        return
    specs = _specifications()
    if specs is None:
        return
    for name in names:
        hook = getattr(module, name)
        known = specs.get(name)
        if known is None or not inspect.isroutine(hook):
            continue
        unknown = set(argnames(hook)) - known
        if unknown:
            import pluggy

            raise pluggy.PluginValidationError(
                module,
                f"Plugin {str(path)!r} for hook {name!r}\nhookimpl definition: {_definition(hook)}\n"
                f"Argument(s) {unknown} are declared in the hookimpl but can not be found in the hookspec",
            )


def _definition(hook: Callable[..., Any]) -> str:
    try:
        return f"{hook.__name__}{inspect.signature(hook)}"
    except (TypeError, ValueError):
        return hook.__name__


def _specifications() -> dict[str, frozenset[str]] | None:
    """Read once: importing ``_pytest.hookspec`` imports pluggy and no more of pytest."""
    global _SPECS, _LOADED
    if not _LOADED:
        _LOADED = True
        try:
            from _pytest import hookspec
        except ImportError:
            return None
        _SPECS = {
            name: frozenset(inspect.signature(spec).parameters)
            for name, spec in vars(hookspec).items()
            if name.startswith("pytest_") and inspect.isfunction(spec)
        }
    return _SPECS
