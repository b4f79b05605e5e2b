"""The pytest side of one run: :class:`PytestSession` holds its configuration, fixture registry and scopes,
loads the conftest.py files at every level and the installed pytest plugins, and keeps their hooks for the
collection (:mod:`rt_testrunner.pycollect_module`) and the run (:mod:`rt_testrunner.pyruntest`) to call.

pytest spreads this over its ``main.py`` (Session), ``config/`` (conftest and plugin loading) and pluggy;
rt keeps each hook's implementations in a list, each with the folder it applies to (a conftest.py's
hooks apply to the files below its folder), and calls them through :mod:`rt_testrunner.pyplugins`.
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
import sys
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from rt_testrunner import builtin_fixtures, importing, pyplugins, pywarnings
from rt_testrunner.async_plugins import AsyncModes
from rt_testrunner.execute import BackendKey, backend_key
from rt_testrunner.fixtures import FixtureDef, Registry, ScopeState, argnames
from rt_testrunner.live_log import LiveLog
from rt_testrunner.model import Suite
from rt_testrunner.pycollect_module import ModuleCollection
from rt_testrunner.pyconfig import PytestConfig
from rt_testrunner.pyconfig_objects import Config, Parser
from rt_testrunner.pynodes import HookRelay, PyItem

#: conftest.py hooks kept by name (:meth:`PytestSession.hooks_for`)
NAMED_HOOKS = (
    "pytest_pyfunc_call",
    "pytest_runtest_call",
    "pytest_collect_file",
    "pytest_collect_directory",
    "pytest_pycollect_makemodule",
    "pytest_collection_finish",
    "pytest_itemcollected",
    "pytest_make_parametrize_id",
    "pytest_pycollect_makeitem",
    "pytest_assertrepr_compare",
    "pytest_markeval_namespace",
    "pytest_runtest_protocol",
    "pytest_runtest_logstart",
    "pytest_runtest_logfinish",
    "pytest_unconfigure",
    "pytest_deselected",
    "pytest_terminal_summary",
    "pytest_warning_recorded",
    "pytest_report_header",
    "pytest_report_collectionfinish",
    "pytest_fixture_post_finalizer",
    "pytest_report_to_serializable",
    "pytest_report_from_serializable",
)

#: hooks rt calls for the suite's conftest.py files and plugin modules only, not for installed plugins: the
#: lines they return are printed (pyheader.py), and an installed plugin's (pytest-benchmark's settings) would
#: join every run's output
_SUITE_ONLY_HOOKS = frozenset({"pytest_report_header", "pytest_report_collectionfinish"})

#: the async plugins rt stands in for (async_plugins.py), by top-level module: their
#: ``pytest_pycollect_makeitem`` marks or wraps the async tests rt claims itself, so it is not called. Every
#: other installed plugin's is (pytest-describe's makes a collector of each ``describe_*`` function).
_ASYNC_PLUGIN_MODULES = frozenset({"anyio", "pytest_asyncio", "pytest_trio"})
#: those plugins' hooks rt does the work of: ``pytest_pycollect_makeitem`` (above), ``pytest_runtest_call``,
#: where pytest-trio puts a sync function that runs the test in ``trio.run`` in its place (rt runs it on trio),
#: and ``pytest_pyfunc_call``, where they run async tests on their own loops (rt runs them on its own). Other
#: plugins' ``pytest_pyfunc_call`` is called as a conftest.py's (pytest-twisted's calls the test itself)
_ASYNC_PLUGIN_HOOKS = frozenset({"pytest_pycollect_makeitem", "pytest_runtest_call", "pytest_pyfunc_call"})
#: other plugins whose work rt does itself, by top-level module, and their hooks it does not call:
#: pytest-timeout's wrappers arm ``SIGALRM`` with a handler of their own and put back the default one after
#: each test (which would end rt's run at its next time-out): rt times the tests out as the plugin would
#: (its mark, ini value, ``timeout_func_only``); pytest-rerunfailures' protocol drives pytest's internals,
#: rt retries the test the times the plugin gives (reruns.py)
_STAND_IN_HOOKS = {
    "pytest_timeout": frozenset({"pytest_runtest_protocol", "pytest_runtest_call"}),
    "pytest_rerunfailures": frozenset({"pytest_runtest_protocol"}),
}

#: hooks of conftest.py files and plugins rt keeps in a list of the session's, by hook name
_LISTED_HOOKS = {
    "pytest_generate_tests": "generate_hooks",
    "pytest_collection_modifyitems": "modify_hooks",
    "pytest_runtest_setup": "setup_hooks",
    "pytest_runtest_teardown": "teardown_hooks",
    "pytest_runtest_makereport": "report_hooks",
    "pytest_runtest_logreport": "logreport_hooks",
    "pytest_ignore_collect": "ignore_hooks",
    "pytest_fixture_setup": "fixture_setup_hooks",
    "pytest_asyncio_loop_factories": "loop_factory_hooks",
}


def _set_pytest_version() -> None:
    """``PYTEST_VERSION`` in the environment, the installed pytest's version, as pytest sets it for its whole
    run (since 8.2) before it loads a plugin or a conftest.py: code tells a pytest run by it (cyclopts 5.5.2
    warns of an app called without tokens when ``"pytest" in sys.modules`` and the variable is set, and a
    test expects that warning)."""
    from rt_testrunner.pyrequirements import pytest_version

    version = pytest_version()
    if version is not None:
        os.environ["PYTEST_VERSION"] = version


class PytestSession(ModuleCollection):
    """The state of one run's pytest side: configuration, fixture definitions, scopes, loaded conftests and
    plugins and their hooks; collecting test modules is :class:`ModuleCollection`'s."""

    def __init__(self, pyconfig: PytestConfig, root: Path, backend: str = "asyncio") -> None:
        self.pyconfig = pyconfig
        self.root = root
        self.backend = backend
        self.config = Config(pyconfig, root)
        self.config.command_line_words = list(pyconfig.command_line_options)
        self.config.option_words = [*self._unknown_option_words(), *pyconfig.command_line_options]
        self._told_unknown_options = False
        #: set while an installed plugin or an initial conftest.py is configured (_configuring)
        self._initial_plugins = False
        #: the installed plugins (entry points ``pytest11``) and the objects they registered, in order
        self.plugins: list[Any] = []
        self.plugins_loaded = False
        #: the test files :func:`collect.load_plugins_for` read before the run and found not importing pytest
        self.without_pytest_import: set[Path] = set()
        self._plugins_configured = False
        #: why pytest would stop at start-up with an INTERNALERROR (status 3) where rt goes on otherwise: an
        #: installed plugin's start-up hook raised a warning the suite's filters turn into an error; the run
        #: then collects no further file and runs no test (:meth:`_call_plugins`)
        self.internal_error: str | None = None
        #: pytest's usage error (status 4) at start-up: one of its initial conftest.py files (PytestConfig.
        #: initial_conftest_dirs) failed to import, "ImportError while loading conftest"; the run then
        #: collects no further file and runs no test, where a conftest.py met while collecting is one
        #: collection error of its folder
        self.conftest_import_error: str | None = None
        #: pytest's "not found" for a file named on the command line that a folder collector left out
        #: (``FILE (no match in any of [<ManifestDirectory tests>])``): the run stops before any test
        self.named_left_out: str | None = None
        #: the initial conftest.py files imported before the plugins' ``pytest_configure`` (or what their
        #: import raised), registered when the collection reaches their folder (:meth:`_import_initial_conftests`)
        self._imported_early: dict[Path, types.ModuleType | Exception] = {}
        self.config.hook = HookRelay(
            lambda: [*self.plugins, *(m for m in self.conftests.values() if m is not None)],
            self.config.pluginmanager.firstresult,
        )
        self.config.pluginmanager.on_register = self._registered
        self.config.pluginmanager.on_demand["funcmanage"] = self._fixture_manager
        self.config.pluginmanager.hook = self.config.hook
        self.config.pluginmanager.session_node = lambda: self.node
        #: where a plugin's failure is told (the runner points it at the terminal's stderr)
        self.warn: Callable[[str], None] = _warn
        #: ``pytest_runtest_logreport(report)`` hooks, given each phase's report
        self.logreport_hooks: list[tuple[str, Callable[..., Any]]] = []
        #: ``pytest_fixture_setup(fixturedef, request)`` hooks (pytest-lazy-fixtures' sets ``request.param``)
        self.fixture_setup_hooks: list[tuple[str, Callable[..., Any]]] = []
        self.registry = Registry(fallback=lambda registry: self.load_plugins())
        self.registry.config = self.config
        #: the plugins ``-p no:NAME`` blocks: pytest's own among them take their fixtures and their work away
        #: (``no:logging``: no ``caplog``, no log capture; ``no:capture``: no ``capsys``, nothing captured)
        self.blocked = self.blocked_plugins()
        removed = pyplugins.blocked_names(word for v in pyconfig.plugin_options for word in ("-p", v))
        for fixture in builtin_fixtures.definitions(removed, self.blocked):
            self.registry.add(fixture)
        self.scopes = ScopeState()
        self.conftests: dict[str, types.ModuleType | None] = {}
        #: ``--confcutdir DIR`` (relative to where the run starts): no conftest.py above it is loaded
        self.confcutdir = _confcutdir(pyconfig, root)
        #: folders whose conftest.py failed to load (an error at import, a hook pluggy refuses): as pytest,
        #: one collection error for the folder, and nothing below it collected
        self.broken_conftests: set[str] = set()
        #: files a hook's ``pytest.Module`` collector took that failed to import: collection errors, which
        #: stop the run as pytest's (other errors of a hook's collectors do not, see runner.py)
        self.failed_modules: set[Path] = set()
        self.generate_hooks: list[tuple[str, Callable[..., Any]]] = []
        self.modify_hooks: list[tuple[str, Callable[..., Any]]] = []
        #: conftest.py's ``pytest_runtest_setup(item)``, by the folder they apply to
        self.setup_hooks: list[tuple[str, Callable[..., Any]]] = []
        #: ``pytest_runtest_teardown(item, nextitem)``, by folder: called before the test's fixtures are torn down
        self.teardown_hooks: list[tuple[str, Callable[..., Any]]] = []
        #: what ``record_testsuite_property`` records (the JUnit file's ``<properties>`` of each file's suite)
        self.testsuite_properties: list[tuple[str, object]] = []
        #: ``pytest_runtest_makereport(item, call)``, by folder: given each phase's report (makereport.py)
        self.report_hooks: list[tuple[str, Callable[..., Any]]] = []
        #: ``pytest_sessionfinish(session, exitstatus)`` of the conftests loaded, called once the run is done
        self.finish_hooks: list[Callable[..., Any]] = []
        self.ignore_hooks: list[tuple[str, Callable[..., Any]]] = []
        #: other hooks of the conftest.py files (``pytest_pyfunc_call``, ``pytest_collect_file`` ...), by name,
        #: each with the folder it applies to, in the order the conftest.py files loaded
        self.named_hooks: dict[str, list[tuple[str, Callable[..., Any]]]] = {}
        #: pytest-asyncio's ``pytest_asyncio_loop_factories(config, item)``: the loops its tests run on
        self.loop_factory_hooks: list[tuple[str, Callable[..., Any]]] = []
        #: what ``--ignore`` leaves out (absolute paths, symbolic links kept as pytest keeps them) and the
        #: ``--ignore-glob`` patterns (absolute); ``collect_ignore``/``collect_ignore_glob`` are read from the
        #: conftest.py files when a path is collected
        self.ignored: set[str] = {os.path.abspath(root / entry) for entry in pyconfig.ignore}
        self.ignore_globs: list[str] = [os.path.join(root, pattern) for pattern in pyconfig.ignore_globs]
        self.finder = importing.install(
            pyconfig.python_files,
            pyconfig.flag("consider_namespace_packages"),
            rewrite_helpers=not pyconfig.doctest_modules,
            unique_names=_import_mode(pyconfig) != "importlib",
            spec_project=pyconfig.inifile is None,
            by_location=_import_mode(pyconfig) == "importlib",
            root=Path(pyconfig.rootdir),
        )
        self.xfail_strict = _strict_xfail(pyconfig)
        if pyconfig.runxfail:
            from rt_testrunner.pyskipping import disable_imperative_xfail

            disable_imperative_xfail()
        self.ini_timeout_ms = _ini_timeout_ms(pyconfig)
        self.timeout_func_only = pyconfig.flag("timeout_func_only")
        self.ini_usefixtures = pyconfig.lines("usefixtures")
        self.warning_filters = pyconfig.lines("filterwarnings")
        #: the filters the plugins' ``pytest_configure`` and ``pytest_sessionstart`` added, kept for the session
        self.plugin_filters: list[Any] = []
        #: pytest's warnings plugin (``-p no:warnings`` blocks it): without it pytest neither applies the
        #: ``filterwarnings`` ini and marks nor catches the warnings of a test, so neither does rt
        self.warnings_plugin = "warnings" not in self.blocked
        pywarnings.listing = not pyconfig.disable_warnings
        self.config.warnings_blocked = not self.warnings_plugin
        self.logging_plugin = "logging" not in self.blocked
        self.log_level = pyconfig.log_level if self.logging_plugin else None
        #: pytest's live logging (``log_cli``), None when off
        self.live_log = LiveLog(pyconfig) if self.logging_plugin and pyconfig.log_cli else None
        self.async_modes = AsyncModes(pyconfig.values)
        self.loaded_plugins: set[str] = set()
        self.shouldstop: bool | str = False
        self.shouldfail: bool | str = False
        #: a hook of a test's run that raised where pytest's run loop would end in an INTERNALERROR (status 3):
        #: the run stops after that test (pywarnings.tell_recorded)
        self.hook_error: str | None = None
        #: pytest's ``session.testsfailed``: the failed reports of the tests run so far (set-up, call, teardown;
        #: not an expected failure), which plugins read (pytest-cov's ``--no-cov-on-fail``) and change
        self.testsfailed = 0
        #: pytest's ``session.exitstatus``, set when the session finishes (plugins' sessionfinish hooks read it)
        self.exitstatus = 0
        self.items: list[Any] = []
        #: a ``pytest_collection_modifyitems`` hook or a session- or package-scoped parameter may have put
        #: ``items`` in another order than the files' (the runner then checks: session_order.py)
        self.items_reordered = False
        #: the module and class nodes above the tests (pynodes.parent_of), one per module and class
        self.parent_nodes: dict[tuple[str, str, int], Any] = {}
        #: the tests ``-k``, ``-m`` and ``--deselect`` left out so far (``pyruntest.tell_deselected``)
        self.deselected = 0
        #: those tests (``PyItem``), whose nodes are ``terminalreporter.stats["deselected"]``
        self.deselected_items: list[Any] = []
        #: in a ``--parallel`` worker whose plugins read the reports: each test report so far, serialized for
        #: the worker that ends the session (report_replay.py); None: not kept
        self.report_log: list[dict[str, Any]] | None = None
        #: the files' roots waiting for the session-wide ``pytest_collection_modifyitems`` (and whether to
        #: reorder each), while the run's files are collected before its first test; None otherwise
        self.deferred: list[tuple[Suite, bool]] | None = None
        #: the test classes a ``pytest_collection_modifyitems`` hook collects itself, while it runs
        #: (hook_classes.py)
        self.hook_classes = None
        self._relative: dict[str, str] = {}
        #: ``node.session`` of the pytest nodes rt makes (pycollect.session_view)
        self._session_view: Any = None
        #: each folder's own collector a ``pytest_collect_directory`` hook answered (None: pytest's ``Dir`` or
        #: ``Package``, which rt stands in for), and what it collected (pydirectory.py)
        self.folder_collectors: dict[Path, Any] = {}
        #: the instance of each test class its class-scoped fixtures written as methods are bound to
        self.fixture_holders: dict[type, Any] = {}

    @property
    def path(self) -> Path:
        """pytest's ``session.path``: the rootdir (``session.fspath``, its ``py.path.local``)."""
        return self.root

    @property
    def fspath(self) -> Any:
        from rt_testrunner.pynodes import legacy_path

        return legacy_path(self.root)

    @property
    def testscollected(self) -> int:
        """pytest's ``session.testscollected``: the tests the session-wide collection found, less those left
        out (pytest-json-report writes it in its summary)."""
        return max(len(self.items) - self.deselected, 0)

    def relative(self, file: str) -> str:
        """``file`` relative to the rootdir, as node ids show it (asked for every test: remembered)."""
        found = self._relative.get(file)
        if found is None:
            try:
                found = Path(file).relative_to(self.pyconfig.rootdir).as_posix()
            except ValueError:
                found = _relative_to_initial(Path(file), self.pyconfig.initial_paths)
            self._relative[file] = found
        return found

    # -- conftest.py ------------------------------------------------------------------------------------------

    def load_conftests(self, directory: Path) -> bool:
        """Every conftest.py from the rootdir (or the file's own folder, outside it) down to ``directory``;
        False when a folder on the way is ignored (``collect_ignore``, ``pytest_ignore_collect`` of the
        conftest.py files above it): its conftest.py, as pytest, is not loaded."""
        rootdir = self.pyconfig.rootdir
        chain = [directory, *directory.parents]
        if self.confcutdir is not None:
            # pytest's rule: no conftest.py of a folder above the confcutdir (a folder outside it is not above)
            chain = [folder for folder in chain if folder not in self.confcutdir.parents]
        elif rootdir in chain:
            chain = chain[: chain.index(rootdir) + 1]
        else:
            chain = [directory]
        if not self.plugins_loaded and (
            self.pyconfig.inifile is not None
            or "pytest" in sys.modules
            or any(not name.startswith("no:") for name in self.pyconfig.plugin_options)
            or bool(pyplugins.environment_plugins())
            # an option rt does not know itself (the command line's, PYTEST_ADDOPTS'): only a plugin can
            # register it (pytest-django's --ds for a suite of Django's own TestCase classes)
            or any(word.startswith("-") for word in self.config.option_words)
            or any((folder / "conftest.py").is_file() for folder in chain)
            # an installed plugin's configuration in the environment: pytest-django sets Django up from
            # DJANGO_SETTINGS_MODULE (django-import-export 4.4.3's tox.ini sets it for Django's own TestCase
            # classes, with no pytest configuration, no conftest.py and no module importing pytest)
            or bool(os.environ.get("DJANGO_SETTINGS_MODULE"))
        ):
            self.load_plugins()  # before any conftest.py, as pytest loads them
        for folder in reversed(chain):
            key = str(folder)
            if key in self.broken_conftests:
                return False
            if folder != chain[-1] and self.is_ignored(folder):
                return False
            if key in self.conftests:
                continue
            path = folder / "conftest.py"
            self.conftests[key] = None
            if path.is_file():
                self.finder.add_test_dir(folder)
                try:
                    # only with a conftest.py: one module less at start-up
                    from rt_testrunner import pyhookspecs

                    try:
                        module = self._import_conftest(path)
                    except Exception as exc:
                        if self._is_initial_conftest_path(path):
                            self.conftest_import_error = conftest_import_error(path, exc)
                        raise
                    pyhookspecs.check(module, path)
                    self.conftests[key] = module
                    self._register_plugin_module(module, f"{folder}{os.sep}")
                except BaseException:
                    # pytest's one collection error for the folder: the first file below tells it, and no
                    # file below is collected (load_file's caller reports an empty file as nothing)
                    self.broken_conftests.add(key)
                    raise
        return True

    def load_initial_conftests(self) -> None:
        """pytest's initial conftest.py files, loaded before any file is collected, as pytest loads them at
        start-up: those of the paths the run starts from and their parents, and of their ``test*``
        subfolders (a ``tests/conftest.py`` beside ``alpha/``), the outer first. What they do when imported
        (a warning, a global they set) comes before the test modules', in pytest's order. One that fails to
        import is left to the first file below it, which reports it as before."""
        folders = self.pyconfig.initial_conftest_dirs
        rootdir = self.pyconfig.rootdir
        for folder in sorted(folders or (), key=lambda path: (len(path.parts), str(path))):
            if (folder != rootdir and rootdir not in folder.parents) or not (
                folder / "conftest.py"
            ).is_file():
                continue
            try:
                self.load_conftests(folder)
            except BaseException as exc:  # noqa: BLE001 - imported again, and reported, by its first file
                if isinstance(exc, GeneratorExit):
                    raise
                for key in list(self.broken_conftests):
                    self.broken_conftests.discard(key)
                    self.conftests.pop(key, None)
                return

    def _register_plugin_module(self, module: types.ModuleType, baseid: str) -> None:
        initial = self._initial_plugins or self._is_initial_conftest(module)
        previous, self._initial_plugins = self._initial_plugins, initial
        try:
            self._register_initial_or_not(module, baseid, initial)
        finally:
            self._initial_plugins = previous

    def _register_initial_or_not(self, module: types.ModuleType, baseid: str, initial: bool) -> None:
        self.registry.add_namespace(module.__dict__, baseid)
        hook = getattr(module, "pytest_addoption", None)
        if callable(hook):
            before = set(self.config.registered_options)
            call_hook(hook, parser=Parser(self.config), pluginmanager=self.config.pluginmanager)
            if not initial:
                self.config.late_options |= self.config.registered_options - before
        hook = getattr(module, "pytest_configure", None)
        if callable(hook):
            with self._configuring(initial):
                call_hook(hook, config=self.config)
        self._store_hooks(module, baseid)
        # rt loads a conftest.py when the first file under it is collected, always before any test runs
        hook = getattr(module, "pytest_sessionstart", None)
        if callable(hook):
            # an initial conftest.py's filters hold for the session, as pytest's; a later one's (pytest does
            # not call its pytest_sessionstart) with the collection
            with pywarnings.keeping_added(self.plugin_filters if initial else []):
                call_hook(hook, session=self.node)
        self.load_listed_plugins(module)

    def _is_initial_conftest(self, module: types.ModuleType) -> bool:
        """``module`` is one of pytest's initial conftest.py files, which it loads and configures before
        collecting (PytestConfig.initial_conftest_dirs; the invocation folder's, its parents' and its
        ``test*`` subfolders' when the run does not say)."""
        return self._is_initial_conftest_path(Path(module.__file__ or ""))

    def _is_initial_conftest_path(self, path: Path) -> bool:
        if path.name != "conftest.py":
            return False
        folder, folders = path.parent, self.pyconfig.initial_conftest_dirs
        if folders is None:
            return folder == self.root or folder in self.root.parents or folder.parent == self.root
        return folder in folders

    @contextlib.contextmanager
    def _configuring(self, initial: bool) -> Iterator[None]:
        """pytest's warnings of ``pytest_configure``: those of the installed and ``-p`` plugins, the initial
        conftest.py files and the plugins they name are shown at once and not counted (pytest 9 configures
        them before it records any), and the filters they add hold for the session; a conftest.py loaded
        while collecting warns into the collection's record, counted as pytest counts it."""
        if not initial or not self.warnings_plugin:
            yield
            return
        known = len(self.plugin_filters)
        with pywarnings.shown_not_counted(self.warn), pywarnings.keeping_added(self.plugin_filters):
            yield
        pywarnings.apply_kept(self.plugin_filters[known:])  # and for the rest of the collection, if it runs

    def load_listed_plugins(self, module: types.ModuleType) -> None:
        """The plugins a module's ``pytest_plugins`` names (a conftest.py's, or a test module's: pytest's
        collector hands every module it imports to its plugin manager, and what the module names then
        serves the whole session), each loaded once."""
        plugins = getattr(module, "pytest_plugins", None) or ()
        for plugin in [plugins] if isinstance(plugins, str) else plugins:
            if plugin in self.loaded_plugins:
                continue
            self.loaded_plugins.add(plugin)
            try:
                self._load_listed_plugin(plugin)
            except BaseException:
                # not loaded: the next conftest.py import that names it (an initial conftest.py that failed
                # at start-up is loaded again by its first file, to report the error) fails again, not silently
                self.loaded_plugins.discard(plugin)
                raise

    def _load_listed_plugin(self, plugin: str) -> None:
        plugin_module = _import_plugin(plugin)
        if plugin_module is None:
            return
        if plugin_module.__name__ == "_pytest.pytester":
            self._before_pytester()
        self._register_plugin_module(plugin_module, "")
        if plugin_module.__name__ == "_pytest.pytester":
            self._pytester_registered(plugin_module)

    def _before_pytester(self) -> None:
        """pytester runs pytest in this process and puts ``sys.modules`` back after each test as it was when
        the test began. Under pytest, pytest's own plugin modules (``_pytest.config.default_plugins``:
        junitxml, pastebin, unittest ...) and the installed plugins' are there from its start-up, so they
        survive that: a fixture that patches a plugin module patches the one the inner pytest's hooks use, and
        no inner run imports them again (each did under rt, 80 ms a test: pytest-snapshot 0.9.0's suite took 45
        s under rt, 25 s under pytest). Import them now, as pytest's start-up does."""
        self.registry.load_installed_plugins()
        import importlib

        from _pytest.config import default_plugins

        for name in default_plugins:
            with contextlib.suppress(ImportError):
                importlib.import_module(f"_pytest.{name}")

    def _pytester_registered(self, pytester: types.ModuleType) -> None:
        """pytest's ``legacypath`` plugin (one it always loads, which rt stands in for) answers pytester's
        registration by registering the plugin object that provides ``testdir``, pytester's older
        ``py.path`` flavour (pytest-mock's suite asks for it): its own hook is called, with pytester
        registered under the name it looks for."""
        manager = self.config.pluginmanager
        manager._plugins.setdefault("pytester", pytester)  # noqa: SLF001 - already loaded above
        try:
            from _pytest import legacypath
        except ImportError:  # a pytest without it (older or newer): no ``testdir``, as under that pytest
            return
        hook = getattr(legacypath, "pytest_plugin_registered", None)
        if callable(hook):
            call_hook(hook, plugin=pytester, manager=manager)

    def _store_hooks(self, plugin: Any, baseid: str) -> None:
        """Keep the hooks of ``plugin`` (a conftest.py, an installed plugin or an object one registered) that
        rt calls while it collects and runs tests, for the files under ``baseid``."""
        for name, attribute in _LISTED_HOOKS.items():
            hook = getattr(plugin, name, None)
            if callable(hook):
                getattr(self, attribute).append((baseid, hook))
        hook = getattr(plugin, "pytest_sessionfinish", None)
        if callable(hook):
            self.finish_hooks.append(hook)
        for name in NAMED_HOOKS:
            hook = getattr(plugin, name, None)
            if callable(hook) and not _rt_calls_instead(name, hook):
                if name in _SUITE_ONLY_HOOKS and pyplugins.owner(hook) is not None:
                    continue
                self.named_hooks.setdefault(name, []).append((baseid, hook))

    def _plugin_words(self) -> list[str]:
        """The words of ``addopts``, ``PYTEST_ADDOPTS`` and the command line's ``-p`` options."""
        from rt_testrunner import addopts

        return addopts.plugin_words(self.pyconfig)

    def _unknown_option_words(self) -> list[str]:
        """The words of ``addopts`` and ``PYTEST_ADDOPTS`` that rt does not read itself: where an option a
        plugin or conftest.py registers takes its value. The options rt reads keep their defaults for the
        plugins (``-n 2`` in addopts leaves pytest-xdist's ``numprocesses`` unset: rt runs its own way, and a
        plugin seeing it set would wait for xdist's workers)."""
        from rt_testrunner import addopts

        return list(addopts.read(self.pyconfig).unknown_words)

    def tell_unknown_options(self) -> str | None:
        """Once the run's files are collected (every plugin and conftest.py has registered its options):
        pytest's usage error, returned, for the options of ``addopts``, ``PYTEST_ADDOPTS`` and ``rt test``'s
        own command line (:meth:`command_line_error`), then for the configuration file's keys."""
        if self._told_unknown_options:
            return None
        self._told_unknown_options = True
        return self.command_line_error() or self._unknown_ini_keys()

    def _unknown_ini_keys(self) -> str | None:
        """pytest's check of the configuration file once collected (conftest.py files loaded late register
        theirs too): each name nothing registered is a ``PytestConfigWarning`` "Unknown config option: NAME",
        counted in the summary; under ``strict_config`` (``--strict-config``, or ``strict``) the first is
        returned, pytest's usage error."""
        unknown = self.config.unknown_ini_keys()
        if not unknown:
            return None
        if self.config.strict_config():
            return f"Unknown config option: {unknown[0]}"
        try:
            from _pytest.warning_types import PytestConfigWarning  # a pytest project: pytest is installed
        except ImportError:
            return None
        for name in unknown:
            self.config.issue_config_time_warning(PytestConfigWarning(f"Unknown config option: {name}\n"), 3)
        return None

    def command_line_error(self) -> str | None:
        """What pytest refuses to start with, in its words, for the options of ``addopts``, ``PYTEST_ADDOPTS``
        and ``rt test``'s command line that rt does not know itself: a value the option refuses (``argument
        --level: invalid choice: 4 ...``), an option nothing registered before pytest parsed them, in their
        order (``unrecognized arguments: --nbmake --x``: a plugin's option without that plugin installed too,
        ``--timeout`` without pytest-timeout), a word after a flag (pytest takes it for a test path: ``file or
        directory not found: 3``)."""
        from rt_testrunner import addopts

        config = self.config
        if config.usage_errors:
            return config.usage_errors[0]
        inifile = self.pyconfig.inifile
        if inifile is not None and inifile.suffix == ".toml":
            from rt_testrunner.pytoml_types import native_type_error

            refused = native_type_error(self.pyconfig)
            if refused is not None:
                return refused
        words = list(self.pyconfig.command_line_options)
        unknown = addopts.read(self.pyconfig).unrecognized(config.registered_options - config.late_options)
        unknown += [
            word
            for word in words
            if word.startswith("-")
            and (
                word.partition("=")[0] not in config.registered_options
                or word.partition("=")[0] in config.late_options
            )
        ]
        if unknown:
            return f"unrecognized arguments: {' '.join(unknown)}"
        for word, following in zip(words, words[1:], strict=False):
            if word in config.flag_options and not following.startswith("-"):
                return f"file or directory not found: {following}"
        return None

    def blocked_plugins(self) -> set[str]:
        """The plugins ``-p no:NAME`` blocks, in ``addopts``, ``PYTEST_ADDOPTS`` or on the command line (each
        under its name and ``pytest_NAME``)."""
        return pyplugins.blocked_names(self._plugin_words())

    def _load_named_plugins(self) -> None:
        """The modules ``-p MODULE`` names, then those of ``PYTEST_PLUGINS``, loaded as plugins after the
        installed ones (a name pytest loads anyway, its own or an installed plugin's, adds nothing)."""
        for name in [*pyplugins.named_plugins(self._plugin_words()), *pyplugins.environment_plugins()]:
            if name in self.loaded_plugins or pyplugins.is_installed_name(name):
                continue
            self.loaded_plugins.add(name)
            try:
                module = _import_plugin(name)
            except ImportError as exc:
                self.warn(f"rt test: -p {name}: the plugin cannot be imported ({exc})")
                continue
            if module is not None:
                if module.__name__ == "_pytest.pytester":
                    self._before_pytester()
                self.plugins.append(module)
                self._register_plugin_module(module, "")
                if module.__name__ == "_pytest.pytester":
                    self._pytester_registered(module)

    @property
    def node(self) -> Any:
        """pytest's ``Session`` node of this session (scope_nodes.py): what the hooks get as ``session``, and
        ``item.session``, ``request.session`` and the top of ``item.listchain()``, one object as pytest's."""
        from rt_testrunner.scope_nodes import session_node

        return session_node(self)

    def _fixture_manager(self) -> Any:
        """``config.pluginmanager.get_plugin("funcmanage")``: pytest's fixture manager, in rt's shapes."""
        from rt_testrunner.session_view import session_view

        return session_view(self)._fixturemanager  # noqa: SLF001 - the view's own manager

    def load_plugins(self) -> None:
        """Load the pytest plugins installed in the environment (entry points ``pytest11``) that are not
        blocked (``-p no:NAME`` in ``addopts`` or ``PYTEST_ADDOPTS``, ``PYTEST_DISABLE_PLUGIN_AUTOLOAD``), as
        pytest does at start-up: their fixtures below every definition of the suite, their hooks as a root
        conftest.py's, and ``pytest_addhooks``, ``pytest_addoption``, ``pytest_load_initial_conftests``,
        ``pytest_configure`` and ``pytest_sessionstart`` called now, in pytest's order. rt calls this before
        the first conftest.py of a pytest suite loads, or when a test first asks for a fixture no definition
        provides. The kernel's entry-point reader finds them: ``importlib.metadata`` costs an import and a
        parse of every distribution's metadata, at every run."""
        if self.plugins_loaded:
            return
        self.plugins_loaded = True
        from rt_testrunner import startup_modules  # a pytest suite's only: one module less in a plain run

        _set_pytest_version()

        before_suite = not importing.SUITE_IMPORTED
        startup_modules.import_left_by_pytest(self.blocked)
        found, problems = pyplugins.load_installed(self.blocked)
        if before_suite and "pytest" in sys.modules:
            # pytest imported by rt or the plugins, not by the suite: a warm server may import them first
            pyplugins.LOADED_BEFORE_SUITE = frozenset(self.blocked)
        for line in problems:
            self.warn(f"rt test: {line}")
        manager = self.config.pluginmanager
        for plugin in found:
            manager._plugins[plugin.name] = plugin.module  # noqa: SLF001 - registered without the callback
            manager.distributions.append((plugin.module, plugin.distribution))
            self.plugins.append(plugin.module)
            self._store_hooks(plugin.module, "")
        self._call_plugins("pytest_addhooks", pluginmanager=manager)
        self._call_plugins("pytest_addoption", parser=Parser(self.config), pluginmanager=manager)
        self._call_plugins(
            "pytest_load_initial_conftests",
            early_config=self.config,
            parser=Parser(self.config),
            args=list(self.config.option_words),  # addopts', PYTEST_ADDOPTS' and the command line's options
        )
        self._import_initial_conftests()
        # pytest_configure is a historic hook: an object a plugin registers while it runs (inline-snapshot's
        # InlineSnapshotPlugin) has its own pytest_configure called at once, as pluggy replays the history
        self._plugins_configured = True
        with self._configuring(True):
            self._call_plugins("pytest_configure", config=self.config)
        # their fixtures once configured, as pytest's fixture manager parses them when the session starts: a
        # fixture's scope callable reads the plugin's own option (pytest-flask's live_server)
        self._add_plugin_fixtures(found)
        with pywarnings.keeping_added(self.plugin_filters):
            self._call_plugins("pytest_sessionstart", session=self.node)
        # -p MODULE: configured before collecting, as the installed ones
        previous, self._initial_plugins = self._initial_plugins, True
        try:
            self._load_named_plugins()
        finally:
            self._initial_plugins = previous

    def _add_plugin_fixtures(self, found: list[Any]) -> None:
        """The fixtures of the installed plugins' modules, below every definition of the suite; an autouse one
        is set up for every test, as pytest does (inline-snapshot's snapshot_check fails a test whose
        snapshots are wrong), or the suite's fixture of its name where the suite overrides it
        (pytest-asyncio's event_loop_policy, overridden by a conftest.py with params)."""
        for plugin in found:
            if isinstance(plugin.module, types.ModuleType):
                for fixture in _definitions(plugin.module.__dict__, autouse=True, config=self.config):
                    self.registry.defs.setdefault(fixture.name, []).insert(0, fixture)
                    if fixture.autouse:
                        self.registry.autouse.insert(0, fixture)

    def _import_initial_conftests(self) -> None:
        """pytest imports its initial conftest.py files (PytestConfig.initial_conftest_dirs, below the rootdir)
        before it calls ``pytest_configure``: bidict's tests/conftest.py registers the Hypothesis profile that
        ``--hypothesis-profile=less-examples`` in its addopts names, which Hypothesis's plugin loads in its
        ``pytest_configure`` (imported after it, the profile was missing and the conftest.py failed with
        ``KeyError``). They are imported here, parents first, and registered as before, when the collection
        reaches their folder (:meth:`load_conftests`); the first that fails stops the imports, as pytest's
        start-up stops."""
        folders, rootdir = self.pyconfig.initial_conftest_dirs, self.pyconfig.rootdir
        for folder in sorted(folders or (), key=lambda f: (len(f.parts), f)):
            if folder != rootdir and rootdir not in folder.parents:
                continue
            if self.confcutdir is not None and folder in self.confcutdir.parents:
                continue
            path = folder / "conftest.py"
            if str(folder) in self.conftests or path in self._imported_early or not path.is_file():
                continue
            self.finder.add_test_dir(folder)
            try:
                self._imported_early[path] = importing.import_path(path)
            except Exception as exc:  # noqa: BLE001 - raised again when the collection reaches its folder
                self._imported_early[path] = exc
                return

    def _import_conftest(self, path: Path) -> types.ModuleType:
        """The conftest.py at ``path``, imported now or before the plugins were configured."""
        early = self._imported_early.pop(path, None)
        if isinstance(early, Exception):
            raise early
        return early if early is not None else importing.import_path(path)

    def _call_plugins(self, name: str, **available: Any) -> None:
        """Hook ``name`` of every plugin, one at a time in pluggy's order: a plugin whose hook raises is told
        in one line and left out of the rest of the run, and the others go on. A warning the suite's filters
        turn into an error (pytest-asyncio 1.5.0's unset ``asyncio_default_fixture_loop_scope`` under
        ``filterwarnings = error``) is the suite's own configuration, not an incompatible plugin: pytest
        configures its plugins under those filters and stops before collecting (INTERNALERROR, status 3),
        and so does rt's run (:attr:`internal_error`)."""
        hooks = [getattr(p, name) for p in self.plugins if callable(getattr(p, name, None))]
        for hook in pyplugins.ordered(hooks):
            try:
                pyplugins.call(name, [hook], available)
            except pyplugins.PluginHookError as exc:
                if isinstance(exc.__cause__, Warning):
                    self.internal_error = self.internal_error or (
                        f"{exc} (a warning the filterwarnings make an error: pytest stops with an INTERNALERROR)"
                    )
                else:
                    self.warn(f"rt test: {exc} (the plugin is left out of this run)")
                self._drop_plugin(pyplugins.owner(hook))

    def _drop_plugin(self, plugin: str | None) -> None:
        """Leave out every hook of installed plugin ``plugin`` (after one of them failed)."""
        if plugin is None:
            return

        def kept(hook: Callable[..., Any]) -> bool:
            return pyplugins.owner(hook) != plugin

        for attribute in _LISTED_HOOKS.values():
            setattr(self, attribute, [(base, hook) for base, hook in getattr(self, attribute) if kept(hook)])
        self.finish_hooks = [hook for hook in self.finish_hooks if kept(hook)]
        self.named_hooks = {
            name: [(base, hook) for base, hook in hooks if kept(hook)]
            for name, hooks in self.named_hooks.items()
        }
        self.plugins = [p for p in self.plugins if pyplugins.owner_of(p) != plugin]

    def _registered(self, plugin: Any, name: str) -> None:
        """An object (or module) a plugin or conftest.py registered with ``config.pluginmanager.register``:
        its hooks take part from now on, and its ``pytest_configure`` runs at once when the others' ran. One
        registered as ``terminalreporter`` (pytest-relaxed's, pytest-sugar's reporter) takes no part: the
        output is rt's."""
        if name == "terminalreporter":
            return
        self.plugins.append(plugin)
        # its fixtures too, as pytest's fixture manager parses every registered plugin (pytest's legacypath
        # registers the object whose ``testdir`` fixture wraps pytester's)
        for fixture in _definitions(
            {name: getattr(plugin, name, None) for name in dir(plugin)}, autouse=True, config=self.config
        ):
            if not any(known.func is fixture.func for known in self.registry.defs.get(fixture.name, ())):
                self.registry.add(fixture)
        self._store_hooks(plugin, "")
        # pytest_addhooks is historic too: pytest-json-report's object declares its firstresult hooks there
        addhooks = getattr(plugin, "pytest_addhooks", None)
        if callable(addhooks):
            pyplugins.call("pytest_addhooks", [addhooks], {"pluginmanager": self.config.pluginmanager})
        if self._plugins_configured:
            hook = getattr(plugin, "pytest_configure", None)
            if callable(hook):
                pyplugins.call("pytest_configure", [hook], {"config": self.config})

    def reruns(self, item: PyItem) -> int | None:
        """The retries pytest-rerunfailures gives ``item`` when it is loaded (reruns.py)."""
        if not self.plugins:
            return None
        from rt_testrunner.reruns import rerun_count

        return rerun_count(self.config.pluginmanager, item.node)

    def suite_properties(self, start: int = 0) -> tuple[tuple[str, str], ...]:
        """The ``record_testsuite_property`` pairs from the ``start``-th on, values as the text pytest's junitxml
        writes (``str(value)``)."""
        return tuple((str(name), str(value)) for name, value in self.testsuite_properties[start:])

    def hooks_for(self, name: str, file: str) -> list[Callable[..., Any]]:
        """The ``name`` hooks of the plugins and the conftest.py files above ``file``, in the order they
        loaded."""
        return [hook for base, hook in self.named_hooks.get(name, ()) if file.startswith(base)]

    def is_ignored(self, path: Path) -> bool:
        """``path`` (a test file or a folder) is left out by ``collect_ignore``/``collect_ignore_glob`` or by a
        ``pytest_ignore_collect(collection_path, config)`` hook of a conftest.py above it (True: ignored;
        False or None: not, the first answer that is not None wins, as pytest's firstresult hook)."""
        text = str(path)
        ignored = [*self.ignored, *self._conftest_pathlist("collect_ignore", path.parent)]
        if any(text == entry or text.startswith(entry + os.sep) for entry in ignored):
            return True
        globs = [*self.ignore_globs, *self._conftest_pathlist("collect_ignore_glob", path.parent)]
        if any(fnmatch.fnmatch(text, pattern) for pattern in globs):
            return True
        for baseid, hook in reversed(self.ignore_hooks):
            if text.startswith(baseid) or not baseid:
                answer = self._collection_hook(
                    "pytest_ignore_collect",
                    [hook],
                    lambda: {"collection_path": path, "config": self.config},
                    firstresult=True,
                )
                if answer is not None:
                    return bool(answer)
        return False

    def _conftest_pathlist(self, name: str, folder: Path) -> list[str]:
        """pytest's ``config._getconftest_pathlist(name, folder)``: the list ``name`` (``collect_ignore``,
        ``collect_ignore_glob``) of the innermost conftest.py at or above ``folder`` that has one, its entries
        made absolute from that conftest.py's folder. Read when asked, as pytest reads it: a conftest.py's
        ``pytest_configure`` may fill it after the import (asdf 6.0.0's ``collect_ignore_glob.append("*")``
        unless ``--jsonschema`` is given, which rt read before that hook ran: 6,700 more tests than pytest's),
        and a folder's own list hides its parents'."""
        for candidate in (folder, *folder.parents):
            module = self.conftests.get(str(candidate))
            if module is None or not hasattr(module, name):
                continue
            base = Path(module.__file__ or ".").parent
            return [os.path.abspath(base / entry) for entry in getattr(module, name) or ()]
        return []

    def asyncio_backend(self, item: PyItem) -> BackendKey:
        """The asyncio loop of a test pytest-asyncio runs: the one factory of the conftest's
        ``pytest_asyncio_loop_factories`` hook (pytest-asyncio 1.5), else asyncio's default loop."""
        for base, hook in reversed(self.loop_factory_hooks):
            if item.file.startswith(base):
                factories = call_hook(hook, config=self.config, item=item.node)
                if isinstance(factories, dict) and len(factories) == 1:
                    return backend_key("asyncio", {"loop_factory": next(iter(factories.values()))})
        return backend_key("asyncio")


#: the plugins whose ``pytest_fixture_setup`` runs async fixtures on their own loops or reactor: rt sets those
#: fixtures up itself, and a parametrized fixture is not handed to their hook (pyee 13.0.1: pytest-twisted's
#: needs a running event loop)
_OWN_FIXTURE_SETUP = _ASYNC_PLUGIN_MODULES | {"pytest_twisted"}


def of_async_plugin(hook: Callable[..., Any]) -> bool:
    """``hook`` belongs to one of the async plugins (:data:`_OWN_FIXTURE_SETUP`) whose
    ``pytest_fixture_setup`` wraps or claims async fixtures, which rt sets up itself."""
    module = getattr(getattr(hook, "__func__", hook), "__module__", None) or ""
    return module.split(".")[0] in _OWN_FIXTURE_SETUP


def _rt_calls_instead(name: str, hook: Callable[..., Any]) -> bool:
    """rt does the work of installed plugin hook ``hook`` itself (:data:`_ASYNC_PLUGIN_HOOKS`,
    :data:`_STAND_IN_HOOKS`)."""
    if pyplugins.owner(hook) is None:
        return False
    module = (getattr(getattr(hook, "__func__", hook), "__module__", None) or "").split(".")[0]
    if name in _STAND_IN_HOOKS.get(module, ()):
        return True
    return name in _ASYNC_PLUGIN_HOOKS and module in _ASYNC_PLUGIN_MODULES


def conftest_import_error(path: Path, exc: Exception) -> str:
    """pytest's start-up error for an initial conftest.py that failed to import, in one line: its words
    ("ImportError while loading conftest", whatever the error), the error, and the conftest.py's line that
    raised it."""
    import traceback

    lines = [frame.lineno for frame in traceback.extract_tb(exc.__traceback__) if frame.filename == str(path)]
    where = f" ({path.name}:{lines[-1]})" if lines else ""
    return f"ImportError while loading conftest '{path}'. {type(exc).__name__}: {exc}{where}"


def _relative_to_initial(path: Path, initial: tuple[Path, ...]) -> str:
    """A path outside the rootdir as pytest's node ids show it: relative to the path the run started from
    that holds it (pytest's ``_check_initialpaths_for_relpath``; "" for that path itself, so a file named
    on the command line has ``::test`` ids), else in full."""
    if path in initial:
        return ""
    for parent in path.parents:
        if parent in initial:
            return path.relative_to(parent).as_posix()
    return path.as_posix()


def _definitions(namespace: dict[str, Any], autouse: bool = False, config: Any = None) -> list[FixtureDef]:
    """The fixtures of a plugin's namespace (``autouse`` ones only when asked for)."""
    from rt_testrunner.fixtures import make_def

    found = []
    for name, value in list(namespace.items()):
        fixture = make_def(name, value, "", config=config)
        if fixture is not None and (autouse or not fixture.autouse):
            found.append(fixture)
    return found


def _import_plugin(name: str) -> types.ModuleType | None:
    """The module a ``pytest_plugins`` entry names, resolved as pytest's plugin manager resolves it: pytest's
    own plugins go by their short names (``"pytester"`` is ``_pytest.pytester``, which is not loaded by
    default), and those pytest always loads (``"monkeypatch"``, ``"tmpdir"``, ``"doctest"`` ...) are there
    already, as rt's built-ins: None."""
    import importlib

    try:
        from _pytest.config import builtin_plugins, default_plugins
    except ImportError:  # no pytest: the name can only be a module of the suite or the environment
        return importlib.import_module(name)
    if name in default_plugins:
        return None
    return importlib.import_module(f"_pytest.{name}" if name in builtin_plugins else name)


def _warn(line: str) -> None:
    sys.stderr.write(line + "\n")


def call_hook(hook: Callable[..., Any], **available: Any) -> Any:
    wanted = argnames(hook)
    return hook(**{name: available[name] for name in wanted if name in available})


def _confcutdir(pyconfig: PytestConfig, root: Path) -> Path | None:
    """pytest's ``--confcutdir`` of ``addopts`` or the command line, resolved from ``root``; None when not
    given (the conftest.py files from the rootdir down are loaded)."""
    from rt_testrunner.addopts import CONFCUTDIR_OPTION

    value = pyconfig.values.get(CONFCUTDIR_OPTION)
    return None if value is None else (root / str(value)).resolve()


def _import_mode(pyconfig: PytestConfig) -> str:
    """pytest's ``--import-mode`` of ``addopts`` or the command line ("prepend" unless given)."""
    from rt_testrunner.addopts import IMPORT_MODE_OPTION

    return str(pyconfig.values.get(IMPORT_MODE_OPTION, "prepend"))


def _strict_xfail(pyconfig: PytestConfig) -> bool:
    """pytest 9's ``strict_xfail`` (``xfail_strict``, its older name), else its ``strict`` ini value, which
    turns on every strictness at once (stamina's ``strict = true``): the default of an xfail mark's
    ``strict``."""
    for name in ("strict_xfail", "xfail_strict"):
        if name in pyconfig.values:
            return pyconfig.flag(name)
    return pyconfig.flag("strict")


def _ini_timeout_ms(pyconfig: PytestConfig) -> int | None:
    """pytest-timeout's time-out for every test, in seconds, as that plugin takes it when it is installed
    (without it pytest refuses ``--timeout`` and ignores the ini value): its ``--timeout`` in ``addopts`` or
    ``PYTEST_ADDOPTS``, else the ``PYTEST_TIMEOUT`` environment variable, else the ``timeout`` ini value
    (``-o timeout=N`` included); 0 is none. A ``timeout`` mark wins over it."""
    from rt_testrunner.addopts import TIMEOUT_OPTION

    value = pyconfig.values.get(TIMEOUT_OPTION)
    if value in (None, ""):
        value = os.environ.get("PYTEST_TIMEOUT") or pyconfig.values.get("timeout")
    if value in (None, ""):
        return None
    try:
        seconds = float(str(value))
    except ValueError:
        return None
    import importlib.util

    if seconds <= 0 or importlib.util.find_spec("pytest_timeout") is None:
        return None
    return max(1, round(seconds * 1000))
