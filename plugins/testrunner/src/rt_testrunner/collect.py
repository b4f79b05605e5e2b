"""Collection: loading a test file and turning what it declares into a tree of suites and tests.

A file declares tests through ``rt.test`` (registered into the suite on top of the collector's stack while it
loads) and as pytest does (:mod:`rt_testrunner.pycollect_module`): ``test*`` functions, ``Test*`` classes and
``unittest.TestCase`` classes, with fixtures, marks and parametrization.
"""

from __future__ import annotations

import contextlib
import sys
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import ModuleType

from rt_testrunner import api, importing
from rt_testrunner.discovery import TestFile
from rt_testrunner.execute import ScopeTeardown
from rt_testrunner.model import Suite, TestCase
from rt_testrunner.outcomes import skip_exception
from rt_testrunner.pymarks import checked_marks
from rt_testrunner.pysession import PytestSession
from rt_testrunner.pytest_imports import module_imports_pytest
from rt_testrunner.pywarnings import apply_filter, apply_kept, count_recorded
from rt_testrunner.rewrite import load_test_module

#: the flag of a file's root suite when the file was not collected (``collect_ignore``, ``--ignore``,
#: ``pytest_ignore_collect``): the runner leaves it out of the report, as pytest shows nothing of it
IGNORED = frozenset({"ignored"})


def load_plugins_for(files: Sequence[TestFile], session: PytestSession) -> None:
    """The installed plugins, before the first file is collected, when any test module of the run imports
    pytest: pytest has them configured before it imports any module, so a plugin that sets the application
    up (pytest-django, from ``DJANGO_SETTINGS_MODULE``) has done so for the modules that do not import
    pytest too (django-constance 4.4.0, whose first test modules import Django's models)."""
    if session.plugins_loaded:
        return
    for test_file in files:
        if module_imports_pytest(test_file.path):
            session.load_plugins()
            return
        # read once: load_file does not read it again (1-6 ms for 200 files), unless it reloads the file
        session.without_pytest_import.add(test_file.path)


def load_file(test_file: TestFile, session: PytestSession, reload: bool = False) -> Suite:
    """The suite tree of one file; the file's own exceptions (syntax, import errors) propagate.

    The file's conftest.py files load first. A file whose name is a Python identifier is imported under its
    real name (pytest's rules, :mod:`rt_testrunner.importing`); ``math.test.py`` cannot be, and runs as a
    module of a made-up name. Its pytest-style tests (functions, classes, unittest) are collected after the
    ``rt.test`` declarations it made while loading, and both are then put in source order.
    """
    if test_file.directory:
        from rt_testrunner import pydirectory

        return pydirectory.load_folder(test_file, session) or Suite(None, flags=IGNORED)
    root = Suite(None)
    if test_file.custom:
        session.load_plugins()  # a file only a plugin's hook may collect, before any conftest.py loads
    elif not session.plugins_loaded and _may_import_pytest(test_file, session, reload):
        # a test module of a project without pytest's configuration or conftest.py that imports pytest (or a
        # plugin's module): pytest has its plugins configured before it imports the module (pytest-bdd's
        # scenarios() reads the configuration its pytest_configure kept, at import)
        session.load_plugins()
    if not session.load_conftests(test_file.path.parent) or session.is_ignored(test_file.path):
        return Suite(None, flags=IGNORED)  # not collected: the run does not show it (as pytest)
    if session.named_hooks.get("pytest_collect_directory"):
        from rt_testrunner import pydirectory

        collector = pydirectory.leaving_out(test_file.path, session)
        if collector is not None:  # a folder above it has a collector of its own that left it out
            if test_file.named and session.named_left_out is None:  # pytest's "not found" for its argument
                session.named_left_out = f"{test_file.path} (no match in any of [{collector!r}])"
            return Suite(None, flags=IGNORED)
    file = str(test_file.path)
    if test_file.custom:
        from rt_testrunner import pycollect

        pycollect.collect_file(test_file.path, root, session, test_file.selectors)
        session._modify_items(root, file)  # noqa: SLF001 - the session's own hook call, for these items too
        return root
    if test_file.doctest_text:
        from rt_testrunner import doctests

        doctests.add_text_doctests(test_file.path, root, session)
        # the conftest.py files' and plugins' collectors of the file too, first, as pluggy calls their
        # pytest_collect_file before pytest's doctest plugin's (pygments 2.21.0's snippets/**/test_*.txt)
        _add_file_collectors(test_file, root, session)
        session._modify_items(root, file)  # noqa: SLF001 - the session's own hook call, for doctests too
        root.hooks["after_all"].append(ScopeTeardown(lambda: session.scopes.finish(("module", file))))
        return root
    if not test_file.doctest_only and session.named_hooks.get("pytest_pycollect_makemodule"):
        from rt_testrunner import pycollect

        if pycollect.make_module(test_file.path, root, session, test_file.selectors):
            # a hook's own collector for the test module (wrapt's, which skips modules of newer Pythons
            # unimported): what it collects stands for the module's tests
            _add_file_collectors(test_file, root, session)
            session._modify_items(root, file)  # noqa: SLF001 - the session's own hook call
            return root
    api.REGISTERED_FUNCTIONS.clear()
    with api.collecting_into(root), checked_marks(session.config):
        module = _import(test_file, session, reload)
    if test_file.doctest_only:
        if test_file.path.name != "conftest.py":  # a conftest.py's fixtures are registered already
            session.registry.add_namespace(module.__dict__, f"{file}::")
        _add_doctests(module, test_file.path, root, session)
        # the plugins' collectors of the module too (pytest-isort's and pytest-pycodestyle's checks of every
        # .py file, the package's modules among them)
        _add_file_collectors(test_file, root, session)
        session._modify_items(root, file)  # noqa: SLF001 - the session's own hook call, for doctests too
        root.hooks["after_all"].append(ScopeTeardown(lambda: session.scopes.finish(("module", file))))
        return root
    declared = bool(root.children)
    session.collect(module, root, file, test_file.selectors, set(api.REGISTERED_FUNCTIONS))
    _add_file_collectors(test_file, root, session)
    if declared:
        root.children.sort(key=_first_line)
    if session.pyconfig.doctest_modules:
        # pytest collects a test module's doctests before its tests; a node id (``mod.py::mod.func``) selects
        tests, root.children = root.children, []
        _add_doctests(module, test_file.path, root, session, test_file.selectors)
        root.children.extend(tests)
    return root


def _may_import_pytest(test_file: TestFile, session: PytestSession, reload: bool) -> bool:
    """Whether the test module imports pytest, read from its source unless :func:`load_plugins_for` read it
    before the run (a file it did not see: one a folder collector yields, a rerun that reloads the file, which
    may have changed since)."""
    if not reload and test_file.path in session.without_pytest_import:
        return False
    return module_imports_pytest(test_file.path)


def _add_file_collectors(test_file: TestFile, root: Suite, session: PytestSession) -> None:
    """What the ``pytest_collect_file`` hooks of the conftest.py files and plugins collect from a test module,
    before its own tests, as pluggy calls their hooks before pytest's own."""
    if not session.named_hooks.get("pytest_collect_file"):
        return
    from rt_testrunner import pycollect

    extra = Suite(None)
    pycollect.collect_file(test_file.path, extra, session, test_file.selectors, test_module=True)
    for child in extra.children:
        if isinstance(child, TestCase):
            child.suite = root
        else:
            child.parent = root
    root.children[:0] = extra.children


@contextlib.contextmanager
def warnings_while_collecting(session: PytestSession) -> Iterator[None]:
    """The warning filters test modules and conftest.py files are imported under, as pytest collects: its
    own (deprecation warnings always shown, unless ``python -W`` set filters) and the configuration's
    ``filterwarnings`` (``-W`` included), in one ``catch_warnings`` around the whole collection. So a module
    that records what an import warns (``with warnings.catch_warnings(record=True)``) sees the
    deprecation warnings it expects, ``filterwarnings = error`` makes a warning at import a collection error,
    and the filters a module sets at import apply to the modules imported after it and are gone when
    the tests run. The warnings themselves are kept from the output, as pytest keeps them for its summary.
    Nothing of this with pytest's warnings plugin blocked (``-p no:warnings``)."""
    if not session.warnings_plugin:
        yield
        return
    with warnings.catch_warnings(record=True) as caught:
        apply_kept(session.plugin_filters)  # what the plugins' pytest_configure added
        if not sys.warnoptions:
            warnings.filterwarnings("always", category=DeprecationWarning)
            warnings.filterwarnings("always", category=PendingDeprecationWarning)
        for text in session.warning_filters:
            apply_filter(text)
        try:
            yield
        finally:
            count_recorded(caught, "collect")
            hooks = session.named_hooks.get("pytest_warning_recorded")
            if caught and hooks:  # after the collection, as pytest's warnings plugin tells them
                from rt_testrunner.pywarnings import tell_recorded

                tell_recorded([hook for _, hook in hooks], caught, "collect", "", session)


def _import(test_file: TestFile, session: PytestSession, reload: bool) -> ModuleType:
    """The test file's module; a module collected for its doctests alone that does not import is skipped
    with ``--doctest-ignore-import-errors`` (pytest's option), else a collection error as any other. Such a
    module is imported under its real name even when that is no identifier (jaraco.text's
    ``jaraco/text/to-dvorak.py``, whose relative imports need its package), as pytest imports it."""
    if not importing.importable(test_file.path) and not test_file.doctest_only:
        return load_test_module(test_file.path, test_file.relative)
    if reload:
        importing.forget(test_file.path)
    if not (test_file.doctest_only and session.pyconfig.doctest_ignore_import_errors):
        return importing.import_path(test_file.path)
    try:
        return importing.import_path(test_file.path)
    except ImportError:
        raise skip_exception(f"unable to import module {test_file.relative!r}", module_level=True) from None


def _add_doctests(
    module: ModuleType, path: Path, root: Suite, session: PytestSession, selectors: tuple[str, ...] = ()
) -> None:
    """``--doctest-modules``: the module's doctests are tests of the file too."""
    from rt_testrunner import doctests

    doctests.add_module_doctests(module, path, root, session, selectors)


def _first_line(child: TestCase | Suite) -> int:
    if isinstance(child, TestCase):
        return child.location.line if child.location else 0
    return min((t.location.line for t in child.tests() if t.location), default=0)


def load_preload(path: Path, into: Suite) -> None:
    """Run a ``--preload`` script; the hooks it declares at top level go to ``into`` (the run's root)."""
    api.REGISTERED_FUNCTIONS.clear()
    with api.collecting_into(into):
        load_test_module(path, f"preload/{path.name}")
