"""Which files the installed pytest plugins' ``pytest_collect_file`` hooks may collect, known before any
plugin is imported.

pytest hands every file of the folders it collects to the ``pytest_collect_file`` hooks of the installed
plugins (``pytest11`` entry points) and of the ``-p`` ones: pytest-relaxed collects every ``.py`` file of
``tests/``, pytest-mypy every ``.py`` file, pytest-mypy-plugins ``.yml`` cases. rt finds the test files
before the plugins load (discovery runs before the session), so it reads each plugin module's source, found
on ``sys.path`` without importing anything, and takes the suffixes its string literals name
(:func:`rt_testrunner.discovery.claims_in_source`). A run whose plugins have no such hook (nearly all) pays
for reading their entry points and modules once, and no file more is visited.
"""

from __future__ import annotations

import importlib.machinery
import os
from collections.abc import Iterable, Mapping, Sequence

from rt_testrunner.discovery import claims_in_source


def module_source(name: str, path: Sequence[str] | None = None) -> str:
    """The source of module ``name`` (``pytest_relaxed.plugin``), found on ``path`` (default ``sys.path``)
    without importing it or its packages; empty when it is not a plain source file (a compiled module, a
    zip)."""
    search: list[str] | None = list(path) if path is not None else None
    spec = None
    parts = name.split(".")
    for depth in range(len(parts)):
        spec = importlib.machinery.PathFinder.find_spec(".".join(parts[: depth + 1]), search)
        if spec is None:
            return ""
        search = list(spec.submodule_search_locations or [])
    origin = spec.origin if spec is not None else None
    if not origin or not origin.endswith(".py"):
        return ""
    try:
        with open(origin, "rb") as handle:
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return ""


def collect_file_claims(
    plugin_names: Iterable[str], path: Sequence[str] | None = None, environ: Mapping[str, str] = os.environ
) -> frozenset[str]:
    """The suffixes the ``pytest_collect_file`` hooks of the installed plugins (unless
    ``PYTEST_DISABLE_PLUGIN_AUTOLOAD`` is set) and of the modules ``-p`` names (``plugin_names``) may
    collect, found on ``path``: the ``sys.path`` the run will have (the configuration's ``pythonpath``, the
    root), on which the plugins load later without reading their entry points again. A plugin that
    ``-p no:NAME`` blocks still counts: its files are then handed to no hook, and not reported."""
    from rt_testrunner.pyplugins import AUTOLOAD_OFF, pytest11

    modules = [name for name in plugin_names if name and not name.startswith("no:")]
    if not environ.get(AUTOLOAD_OFF):
        modules += [entry.value.split(":")[0].strip() for entry in pytest11(path)]
    claims: set[str] = set()
    for module in dict.fromkeys(modules):
        claims.update(claims_in_source(module_source(module, path)))
    return frozenset(claims)
