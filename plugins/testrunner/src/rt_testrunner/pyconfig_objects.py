"""The ``config`` and ``parser`` objects a pytest suite's conftest.py and fixtures talk to.

``pytest_addoption`` runs against :class:`Parser`, which keeps each option's default (rt has no command
line for them, so defaults are what the suite sees); ``config.getoption``/``getini``/``addinivalue_line``
answer from those and from the project's pytest configuration.
"""

from __future__ import annotations

import argparse
import os
import sys
import types
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from rt_testrunner.outcomes import skip_exception
from rt_testrunner.pyconfig import DEFAULT_NORECURSE, DEFAULT_PYTHON_FILES, PytestConfig

_LINE_LISTS = ("markers", "filterwarnings", "usefixtures")
#: pytest's strictness ini values and their defaults (None: as ``strict``)
_STRICTNESS: dict[str, Any] = {"strict_markers": None, "strict": False}
#: the marks pytest itself registers (python.py, skipping.py, warnings.py, main.py)
_BUILTIN_MARKERS = (
    *("parametrize", "usefixtures", "skip", "skipif", "xfail", "filterwarnings"),
    *("tryfirst", "trylast"),
)
#: pytest's own ini options of type "args" and "bool", with pytest's defaults: ``config.getini`` answers a
#: list (a plugin's ``getini("python_files") + ["__init__.py"]``) or a bool, set in the configuration or not
_PYTEST_ARGS_INI = {
    "python_files": DEFAULT_PYTHON_FILES,
    "python_classes": ("Test",),
    "python_functions": ("test",),
    "testpaths": (),
    "norecursedirs": DEFAULT_NORECURSE,
    "required_plugins": (),
    "addopts": (),
    "doctest_optionflags": ("ELLIPSIS",),
}
_PYTEST_BOOL_INI = {"consider_namespace_packages": False, "collect_imported_tests": True}
#: pytest's own string ini options whose default is not empty (its terminal reporter reads this one)
_PYTEST_STR_INI = {"console_output_style": "progress"}
_NOTSET: Any = object()
#: pytest 9.2's own ini names and aliases (``config._parser._inidict`` of a run without plugins): a name of
#: the configuration file neither these nor a plugin's ``addini`` register is pytest's "Unknown config option"
PYTEST_INI_NAMES = frozenset(
    {
        *("addopts", "assertion_text_diff_style", "cache_dir", "collect_imported_tests"),
        *("consider_namespace_packages", "console_output_style", "doctest_encoding", "doctest_optionflags"),
        "disable_test_id_escaping_and_forfeit_all_rights_to_community_support",
        *("empty_parameter_set_mark", "enable_assertion_pass_hook", "faulthandler_exit_on_timeout"),
        *("faulthandler_timeout", "filterwarnings", "junit_duration_report", "junit_family"),
        *("junit_log_passing_tests", "junit_logging", "junit_suite_name", "log_auto_indent", "log_cli"),
        *("log_cli_date_format", "log_cli_format", "log_cli_level", "log_date_format", "log_file"),
        *("log_file_date_format", "log_file_format", "log_file_level", "log_file_mode", "log_format"),
        *("log_level", "markers", "max_warnings", "minversion", "norecursedirs"),
        *("parametrize_long_str_id_strategy", "python_classes", "python_files", "python_functions"),
        *("pythonpath", "required_plugins", "strict", "strict_config", "strict_markers"),
        *("strict_parametrization_ids", "strict_xfail", "xfail_strict", "testpaths"),
        *("tmp_path_retention_count", "tmp_path_retention_policy", "truncation_limit_chars"),
        *("truncation_limit_lines", "usefixtures", "verbosity_assertions", "verbosity_subtests"),
        "verbosity_test_cases",
    }
)

#: pytest's own command-line options with their defaults (``vars(config.option)`` of a pytest 9 run without
#: arguments), which plugins read as ``config.option.NAME`` or ``config.getoption("NAME")``
_PYTEST_OPTIONS: dict[str, Any] = {
    "assertmode": "rewrite",
    "basetemp": None,
    "cacheclear": False,
    "cacheshow": None,
    "capture": "fd",
    "code_highlight": "yes",
    "collect_in_virtualenv": False,
    "collectonly": False,
    "color": "auto",
    "confcutdir": None,
    "continue_on_collection_errors": False,
    "debug": None,
    "deselect": None,
    "disable_plugin_autoload": False,
    "disable_warnings": False,
    "doctest_continue_on_failure": False,
    "doctest_ignore_import_errors": False,
    "doctestglob": [],
    "doctestmodules": False,
    "doctestreport": "udiff",
    "durations": None,
    "durations_min": None,
    "exitfirst": False,
    "failedfirst": False,
    "file_or_dir": [],
    "fold_skipped": True,
    "force_short_summary": False,
    "fulltrace": False,
    "help": False,
    "ignore": None,
    "ignore_glob": None,
    "importmode": "prepend",
    "inifilename": None,
    "junitprefix": None,
    "keepduplicates": False,
    "keyword": "",
    "last_failed_no_failures": "all",
    "lf": False,
    "log_auto_indent": None,
    "log_cli_date_format": None,
    "log_cli_format": None,
    "log_cli_level": None,
    "log_date_format": None,
    "log_file": None,
    "log_file_date_format": None,
    "log_file_format": None,
    "log_file_level": None,
    "log_file_mode": None,
    "log_format": None,
    "log_level": None,
    "logger_disable": [],
    "markers": False,
    "markexpr": "",
    "max_warnings": None,
    "maxfail": 0,
    "newfirst": False,
    "no_header": False,
    "no_summary": False,
    "noconftest": False,
    "override_ini": None,
    "pastebin": None,
    "plugins": [],
    "pyargs": False,
    "pythonwarnings": None,
    "reportchars": "fE",
    "rootdir": None,
    "runxfail": False,
    "setuponly": False,
    "setupplan": False,
    "setupshow": False,
    "show_fixtures_per_test": False,
    "showcapture": "all",
    "showfixtures": False,
    "showlocals": False,
    "stepwise": False,
    "stepwise_reset": False,
    "stepwise_skip": False,
    "strict": None,
    "strict_config": None,
    "strict_markers": False,
    "tbstyle": "auto",
    "trace": False,
    "traceconfig": False,
    "usepdb": False,
    "usepdb_cls": None,
    "verbose": 0,
    "version": 0,
    "xfail_tb": False,
    "xmlpath": None,
}


class _PluginManager:
    """``config.pluginmanager``: the installed plugins and the objects plugins register (``register``), which
    take part in the run from then on (``on_register``, the session's); other names are not plugins."""

    def __init__(self) -> None:
        self._plugins: dict[str, Any] = {}
        self._blocked: set[str] = set()
        #: hook names a plugin declared ``firstresult`` with ``add_hookspecs``
        self.firstresult: set[str] = set()
        self.on_register: Any = None
        self.hook: Any = None
        #: the Config this manager belongs to
        self.config: Any = None
        #: the installed plugins loaded, each with its distribution's name (``list_plugin_distinfo``)
        self.distributions: list[tuple[Any, str]] = []
        #: pytest's own plugins rt shows in pytest's shapes, made when first asked for (``funcmanage``: the
        #: fixture manager)
        self.on_demand: dict[str, Callable[[], Any]] = {}
        #: the session's ``Session`` node (set by the session), which the terminal reporter rt makes holds as
        #: ``_session``, as pytest's sets it in its ``pytest_sessionstart``
        self.session_node: Callable[[], Any] | None = None

    def register(self, plugin: Any, name: str | None = None) -> str | None:
        name = name or getattr(plugin, "__name__", None) or str(id(plugin))
        if name in self._blocked or name in self._plugins:
            return None
        self._plugins[name] = plugin
        if self.on_register is not None:
            self.on_register(plugin, name)
        return name

    def unregister(self, plugin: Any = None, name: str | None = None) -> Any:
        for key, value in list(self._plugins.items()):
            if key == name or (plugin is not None and value is plugin):
                return self._plugins.pop(key)
        return None

    def hasplugin(self, name: str) -> bool:
        return name in self._plugins

    has_plugin = hasplugin

    def getplugin(self, name: str) -> Any:
        found = self._plugins.get(name)
        if found is None and name in self.on_demand:
            found = self._plugins[name] = self.on_demand.pop(name)()
        if (
            found is None
            and name == "terminalreporter"
            and self.config is not None
            and "pytest" in sys.modules
        ):
            found = self._plugins[name] = _terminal_reporter(self.config, self.session_node)
        if found is None and name == "runner" and "pytest" in sys.modules:
            # pytest's runner plugin, whose functions run a test through ``item.ihook``, which runs rt's
            # phases: flaky's plain pytest_runtest_protocol calls its protocol and patches its call_and_report
            import _pytest.runner

            found = _pytest.runner
        return found

    get_plugin = getplugin

    def get_plugins(self) -> set[Any]:
        return set(self._plugins.values())

    def get_name(self, plugin: Any) -> str | None:
        return next((k for k, v in self._plugins.items() if v is plugin), None)

    def list_plugin_distinfo(self) -> list[tuple[Any, Any]]:
        """pytest's ``(plugin, distribution)`` pairs of the installed plugins (pytest-metadata lists their
        names and versions in pytest-html's report), each distribution with ``project_name``, ``version`` and
        ``metadata``, as pytest's ``DistFacade``. Read when asked: importlib.metadata is no start-up cost."""
        from importlib import metadata

        pairs = []
        for plugin, name in self.distributions:
            try:
                found = metadata.distribution(name)
            except metadata.PackageNotFoundError:
                continue
            facade = types.SimpleNamespace(
                project_name=found.metadata["Name"] or name, version=found.version, metadata=found.metadata
            )
            pairs.append((plugin, facade))
        return pairs

    def list_name_plugin(self) -> list[tuple[str, Any]]:
        return list(self._plugins.items())

    def is_registered(self, plugin: Any) -> bool:
        return any(v is plugin for v in self._plugins.values())

    def is_blocked(self, name: str) -> bool:
        return name in self._blocked

    def set_blocked(self, name: str) -> None:
        self._blocked.add(name)

    def add_hookspecs(self, module_or_class: Any) -> None:
        """A plugin's own hooks (pytest-benchmark's): rt needs only which of them are ``firstresult``."""
        for attr in dir(module_or_class):
            spec = getattr(getattr(module_or_class, attr, None), "pytest_spec", None)
            if attr.startswith("pytest_") and isinstance(spec, dict) and spec.get("firstresult"):
                self.firstresult.add(attr)

    addhooks = add_hookspecs

    def import_plugin(self, name: str) -> None:
        return None


class ConfigStash(dict[Any, Any]):
    """``config.stash``: what pytest's own plugins keep there, for the plugins that read it.

    pytest's assertion plugin keeps its state under ``assertstate_key``; a plugin that loads code through
    pytest's ``AssertionRewritingHook(config)`` (pytest-examples runs each documentation example so, to show
    its asserts' values) reads that state when the hook imports. rt rewrites with its own loader, so the state
    is made when first asked for: rewriting on, and pytest's trace (its debugging output) silent."""

    def __missing__(self, key: Any) -> Any:
        rewrite = sys.modules.get("_pytest.assertion.rewrite")
        if rewrite is not None and key is getattr(rewrite, "assertstate_key", None):
            state = self[key] = types.SimpleNamespace(mode="rewrite", trace=_silent_trace, hook=None)
            return state
        raise KeyError(key)


def _silent_trace(*_: object) -> None:
    """pytest's ``config.trace`` with no ``--debug``: says nothing."""


class Config:
    def __init__(self, pyconfig: PytestConfig, invocation_dir: Path) -> None:
        self._pyconfig = pyconfig
        self.option = argparse.Namespace(
            **{k: list(v) if isinstance(v, list) else v for k, v in _PYTEST_OPTIONS.items()}
        )
        self.option.verbose = pyconfig.verbose
        self.option.basetemp = pyconfig.basetemp
        #: what pytest parsed before loading conftest.py files (pytest-env, pytest-cov read it): the same
        self.known_args_namespace = self.option
        self._ini_defaults: dict[str, Any] = {}
        self._added_lines: dict[str, list[str]] = {}
        self.rootpath = pyconfig.rootdir
        self.inipath = pyconfig.inifile
        self.pluginmanager = _PluginManager()
        self.pluginmanager.config = self
        self.invocation_params = argparse.Namespace(args=(), plugins=(), dir=invocation_dir)
        self.stash: dict[Any, Any] = ConfigStash()
        #: pytest's older name of the stash, which it still keeps (black's tests/optional.py reads it)
        self._store = self.stash
        self.args: list[str] = []
        #: ``config.hook``: the session's HookRelay (pynodes.py)
        self.hook: Any = None
        #: ``config.add_cleanup(func)``: called last first when the session ends (pytest-mock registers one)
        self.cleanups: list[Callable[[], None]] = []
        #: the words of ``addopts`` and ``PYTEST_ADDOPTS``, where an option a plugin or conftest.py registers
        #: takes its value (pytest-benchmark's ``--benchmark-skip``), and the option names registered so far
        self.option_words: list[str] = []
        self.registered_options: set[str] = set()
        #: each option a plugin or conftest.py registered (names, argparse attributes, destination), for a
        #: plugin that parses words itself (``parser.parse_known_args``: pytest-django)
        self.option_specs: list[tuple[tuple[str, ...], dict[str, Any], str]] = []
        #: the words of those on ``rt test``'s own command line (a value they give that the option refuses is
        #: a usage error, as pytest's), the registered options that take no value, and the usage errors found
        self.command_line_words: list[str] = []
        self.flag_options: set[str] = set()
        self.usage_errors: list[str] = []
        #: options registered by a conftest.py pytest loads only while collecting (not an initial one): pytest
        #: has parsed its command line by then, so such an option there is its "unrecognized arguments"
        self.late_options: set[str] = set()
        #: ``-p no:warnings``: pytest's warnings plugin is blocked (set by the session)
        self.warnings_blocked = False

    def add_cleanup(self, func: Callable[[], None]) -> None:
        self.cleanups.append(func)

    @property
    def rootdir(self) -> Any:
        return self.rootpath

    @property
    def inifile(self) -> Path | None:
        return self.inipath

    @property
    def inicfg(self) -> dict[str, Any]:
        """pytest 9's deprecated ``config.inicfg``: the configuration file's values as written, ``-o``'s among
        them (plumbum 2.0.2's conftest.py reads its own key with ``config.inicfg.get``), after pytest's
        ``PytestRemovedIn10Warning``, which the suite's filters may make an error, as under pytest."""
        from _pytest.deprecated import CONFIG_INICFG

        warnings.warn(CONFIG_INICFG.format(), stacklevel=2)
        return self._pyconfig.values

    @property
    def cache(self) -> Any:
        """``config.cache`` (the ``cache`` fixture), made when first asked for."""
        found = self.stash.get("rt:cache")
        if found is None:
            from rt_testrunner.builtin_fixtures import Cache

            folder = self.getini("cache_dir") or ".pytest_cache"
            found = self.stash["rt:cache"] = Cache(Path(self.rootpath, folder))
        return found

    @property
    def _tmp_path_factory(self) -> Any:
        """pytest's ``config._tmp_path_factory`` (the ``tmp_path_factory`` fixture; plugins read it before
        any test runs), made when first asked for: a run's base folder is made when a test first needs one."""
        found = self.stash.get("rt:tmp_path_factory")
        if found is None:
            from rt_testrunner.temp_paths import TempPathFactory

            found = TempPathFactory.from_config(self._pyconfig.values, self._pyconfig.basetemp)
            self.stash["rt:tmp_path_factory"] = found
        return found

    def getoption(self, name: str, default: Any = _NOTSET, skip: bool = False) -> Any:
        """pytest's: ``name`` is the option's attribute or any of its strings (``-v``, ``--tb``); an option
        not registered gives ``default``, else skips the test with ``skip``, else is a ValueError; with
        ``skip`` a value of None does the same. A registered option's None is its value otherwise."""
        if name.startswith("-"):
            # imported here: the table of pytest's option strings is only needed for a dashed name, and a
            # plain run asks by attribute (test_a_plain_run_imports_only_what_it_needs)
            from rt_testrunner.pyoption_names import option_dest

            dest = option_dest(name, self.option_specs)
        else:
            dest = name
        value = getattr(self.option, dest, _NOTSET)
        if value is _NOTSET or (value is None and skip):
            if default is not _NOTSET:
                return default
            if skip:
                raise skip_exception(f"no {name!r} option found")
            # the name as asked, as pytest's (no option registers it, so it maps to no attribute):
            # django-polymorphic's conftest.py asks for pytest-playwright's "--headed"
            raise ValueError(f"no option named {name!r}")
        return value

    getvalue = getoption

    def getini(self, name: str) -> Any:
        if name in _STRICTNESS:  # pytest's own bool values (``--strict-markers`` in addopts sets one)
            return self._pyconfig.flag(name) if name in self._pyconfig.values else _STRICTNESS[name]
        added = self._added_lines.get(name, [])
        if name in _LINE_LISTS:
            return [*self._pyconfig.lines(name), *added]
        if name in _PYTEST_ARGS_INI:
            return self._pyconfig.args(name, _PYTEST_ARGS_INI[name])
        if name in _PYTEST_BOOL_INI:
            return self._pyconfig.flag(name) if name in self._pyconfig.values else _PYTEST_BOOL_INI[name]
        if name in self._pyconfig.values:
            value = self._pyconfig.values[name]
            kind = self._ini_defaults.get(f"{name}:type")
            if kind in ("linelist", "args", "paths") and isinstance(value, str):
                return value.split() if kind != "linelist" else self._pyconfig.lines(name)
            if kind == "bool":
                return self._pyconfig.flag(name)
            return value
        if name in self._ini_defaults:
            return self._ini_defaults[name]
        if name in _PYTEST_STR_INI:
            return _PYTEST_STR_INI[name]
        return [*added] if added else ""

    def _iter_registered_markers(self) -> Iterator[Any]:
        """The marks pytest knows: its own and the ``markers`` lines of the configuration and of the plugins
        and conftest.py files (``config.addinivalue_line("markers", ...)``); ``pytest.mark`` checks a mark's
        name against them (pymarks.checked_marks)."""

        for line in (*_BUILTIN_MARKERS, *self.getini("markers")):
            yield types.SimpleNamespace(name=line.split(":", 1)[0].split("(")[0].strip())

    def addinivalue_line(self, name: str, line: str) -> None:
        self._added_lines.setdefault(name, []).append(line)

    def issue_config_time_warning(self, warning: Warning, stacklevel: int) -> None:
        """pytest's: a warning about the configuration (pytest-asyncio's about an unset loop scope), issued
        under the configuration's filters (``error`` raises it) and counted in the summary as pytest counts
        it, whenever it comes; nothing with pytest's warnings plugin blocked (``-p no:warnings``)."""
        if self.warnings_blocked:
            return
        from rt_testrunner.pywarnings import apply_filter, count_recorded

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", type(warning))
            for text in self._pyconfig.lines("filterwarnings"):
                apply_filter(text)
            warnings.warn(warning, stacklevel=stacklevel)
        count_recorded(caught[:1], "collect")

    def unknown_ini_keys(self) -> list[str]:
        """The names of the configuration file neither pytest nor a plugin or conftest.py registered."""
        registered = {name for name in self._ini_defaults if not name.endswith(":type")}
        return sorted(self._pyconfig.ini_keys - PYTEST_INI_NAMES - registered)

    def strict_config(self) -> bool:
        """pytest 9's ``strict_config`` (``--strict-config``), else its ``strict``."""
        values = self._pyconfig.values
        return self._pyconfig.flag("strict_config" if "strict_config" in values else "strict")

    def get_verbosity(self, verbosity_type: str | None = None) -> int:
        """pytest's: the ``-v`` count, or for a type (``"assertions"``, ``"test_cases"``) its
        ``verbosity_<type>`` ini value when that is a number rather than ``auto``."""
        level = int(self.option.verbose or 0)
        if verbosity_type is None:
            return level
        configured = self._pyconfig.values.get(f"verbosity_{verbosity_type}")
        text = str(configured).strip() if configured is not None else "auto"
        return int(text) if text.lstrip("-").isdigit() else level


class _OneOption(argparse.ArgumentParser):
    """argparse for one option, whose every complaint is raised (never printed, never exiting)."""

    def error(self, message: str) -> Any:
        raise argparse.ArgumentError(None, message)


#: argparse's actions that take no value
_FLAG_ACTIONS = frozenset({"store_true", "store_false", "store_const", "append_const", "count", "help"})


def _given_value(
    names: tuple[str, ...], attributes: dict[str, Any], dest: str, default: Any, words: list[str]
) -> tuple[Any, str | None]:
    """The value ``words`` give the option ``names``, read by argparse as pytest reads it (its action,
    ``type``, ``nargs``, ``choices``); the other words are left alone. A value argparse refuses leaves the
    default, and the complaint is returned with it (pytest would refuse to start)."""
    parser = _OneOption(add_help=False, allow_abbrev=False, exit_on_error=False)
    parser.add_argument(*names, **{**attributes, "dest": dest, "default": default})
    try:
        found, _ = parser.parse_known_args(words)
    except (argparse.ArgumentError, ValueError, TypeError) as exc:
        return default, str(exc)
    return getattr(found, dest, default), None


def _mentions(words: list[str], names: tuple[str, ...]) -> bool:
    return any(word in names or word.partition("=")[0] in names for word in words)


class Parser:
    """What ``pytest_addoption(parser)`` registers: each option's default, or the value ``addopts`` (or
    ``PYTEST_ADDOPTS``) gives it, as pytest parses them with every plugin's and conftest.py's options."""

    def __init__(self, config: Config) -> None:
        self._config = config

    def getgroup(self, name: str, description: str = "", after: str | None = None) -> Parser:
        return self

    def addoption(self, *names: str, **attributes: Any) -> None:
        dest = attributes.get("dest")
        if dest is None:
            longs = [n for n in names if n.startswith("--")]
            dest = (longs[0] if longs else names[0]).lstrip("-").replace("-", "_")
        action = attributes.get("action")
        default = attributes.get("default")
        if default is None:
            default = {"store_true": False, "store_false": True}.get(str(action), None)
        convert = attributes.get("type")
        if isinstance(default, str) and callable(convert):
            default = convert(default)  # as argparse does with a string default
        config = self._config
        config.registered_options.update(names)
        # a destination an earlier option registered keeps its value unless this option is given, as argparse
        # keeps the first default (pytest-django's --nomigrations, then --migrations, both to `nomigrations`)
        shared = any(dest == registered for _, _, registered in config.option_specs)
        config.option_specs.append((names, attributes, dest))
        if action in _FLAG_ACTIONS or attributes.get("nargs") == 0:
            config.flag_options.update(names)
        if _mentions(config.option_words, names):
            default, error = _given_value(names, attributes, dest, default, config.option_words)
            if error is not None and _mentions(config.command_line_words, names):
                config.usage_errors.append(error)  # pytest's "error: argument --level: invalid choice ..."
            elif error is not None:
                sys.stderr.write(f"rt test: {'/'.join(names)} in addopts: {error}\n")
        elif shared:
            return
        setattr(config.option, dest, default)

    _addoption = addoption

    def parse_known_args(
        self, args: Sequence[str | os.PathLike[str]], namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        """pytest's: every option's value, with what ``args`` gives the registered ones on top (the rest of
        ``args`` ignored). A plugin reads its options from it in ``pytest_load_initial_conftests``, before
        pytest's full parse: pytest-django's ``--ds``, ``--dc`` and ``--version``/``--help``."""
        known = argparse.Namespace(**vars(self._config.option)) if namespace is None else namespace
        words = [os.fspath(arg) for arg in args]
        if not words:
            return known
        parser = _OneOption(add_help=False, allow_abbrev=False, exit_on_error=False)
        for names, attributes, dest in self._config.option_specs:
            parser.add_argument(*names, **{**attributes, "dest": dest, "default": argparse.SUPPRESS})
        try:
            found, _ = parser.parse_known_args(words)
        except (argparse.ArgumentError, ValueError, TypeError):
            return known  # a value an option refuses: rt's own parse of these words has said so
        for dest, value in vars(found).items():
            setattr(known, dest, value)
        return known

    def addini(
        self, name: str, help: str = "", type: str | None = None, default: Any = _NOTSET, **_: Any
    ) -> None:
        # an explicit ``default=None`` stays None, as pytest 9's (pytest-asyncio reads None as "not set")
        if default is _NOTSET:
            default = (
                [] if type in ("linelist", "args", "paths") else ("" if type in (None, "string") else False)
            )
        self._config._ini_defaults[name] = default
        self._config._ini_defaults[f"{name}:type"] = type


def _terminal_reporter(config: Any, session_node: Callable[[], Any] | None) -> Any:
    """pytest's ``terminalreporter`` plugin, for a plugin that asks for it: pytest-relaxed and pytest-sugar
    make theirs from its ``config`` and register it under that name, which rt keeps without calling its hooks
    (the output is rt's). What its ``pytest_sessionstart`` sets is set (``_session``, which summary hooks
    read: ``terminalreporter._session.testscollected``, ``.exitstatus``; ``_session_start``), since rt calls
    none of its hooks. None when pytest's cannot be made on rt's configuration."""
    try:
        from _pytest import timing
        from _pytest.terminal import TerminalReporter

        reporter = TerminalReporter(config, sys.stdout)
    except Exception:  # noqa: BLE001 - a pytest whose reporter reads what rt's configuration lacks
        return None
    if session_node is not None:
        reporter._session = session_node()  # noqa: SLF001 - pytest's reporter keeps it there
        reporter._session_start = timing.Instant()  # noqa: SLF001 - as its pytest_sessionstart
    return reporter
