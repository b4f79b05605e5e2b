"""pytest's options, read as rt can honour them: a project's ``addopts`` and ``rt test``'s command line.

Projects put options in ``addopts`` that change what a run selects or how it reports: ``-m "not slow"``,
``-x``, ``-p no:cacheprovider``, ``-ra``, ``--strict-markers``, ``--doctest-modules``, ``--cov=pkg``; users
who switch from pytest type the same ones after ``rt test``. Both are read here, by one function, so an option
means the same in both. rt applies those that shape the outcome and that it has (``-m``, ``-k``,
``-x``/``--maxfail``, ``-s``/``--capture=no``, ``--strict-markers``, ``-W``, ``-o name=value``,
``--log-level``, the ``--doctest-*`` options, ``--ignore``, ``--ignore-glob``, ``--deselect``, ``-p``,
``--runxfail``, ``--junitxml``, ``--reruns``, ``--color``; ``-n``, ``-c`` and ``--rootdir`` on the command
line), ignores those that only change pytest's own display (``-v``, ``-ra``, ``--tb``, ``--durations`` ...),
and names the rest, each with the reason: in one line on stderr for ``addopts`` (an option that would change
the counts must not be dropped without a word, or the user compares counts that differ for no visible
reason), as a usage error on the command line.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs

from rt_testrunner.pyconfig import PytestConfig

#: options without a value that only change pytest's display or its strictness about its own configuration
DISPLAY_FLAGS = frozenset(
    {
        "-v",
        "--verbose",
        "-q",
        "--quiet",
        "-l",
        "--showlocals",
        "--no-showlocals",
        "--no-header",
        "--no-summary",
        "--disable-warnings",
        "--disable-pytest-warnings",
        "--full-trace",
        "--force-short-summary",
        "--no-cov-on-fail",
        "--no-cov",
        "--setup-show",
        "--cache-clear",
        "--new-first",
        "--nf",
        "--keep-duplicates",
        # pytest's other spellings and flags of its own display or its debugging
        "--keepduplicates",
        "--fulltrace",
        "--setupshow",
        "--no-fold-skipped",
        "--xfail-tb",
        "--traceconfig",
        "--trace-config",
        "--debug",
    }
)
#: options with a value that only change pytest's display, reports, caches or module loading that rt
#: has no part in
DISPLAY_OPTIONS = frozenset(
    {
        "--tb",
        "--code-highlight",
        "-r",
        "--durations",
        "--durations-min",
        "--junit-prefix",
        "--log-format",
        "--log-date-format",
        "--log-file",
        "--log-file-level",
        "--log-file-format",
        "--log-file-date-format",
        "--log-file-mode",
        "--verbosity",
        "--cov-report",
        "--cov-config",
        "--reruns-delay",
        "--dist",
        "--maxprocesses",
        "--report-chars",
        "--show-capture",
        "--junitprefix",
        "--log-auto-indent",
        "--pastebin",
    }
)
#: options that choose the configuration itself: honoured on the command line (``-c FILE``, ``--rootdir``),
#: meaningless in ``addopts``, which is read from the configuration they would choose (pytest ignores them
#: there too)
CONFIG_OPTIONS = frozenset({"-c", "--config-file", "--rootdir"})
_NO_CACHE = "rt keeps no cache of earlier runs; select tests with -k, -m, -t or node ids"
#: options rt does not have, and why (shown to the user)
UNSUPPORTED = {
    "--cov": "pytest-cov: use rt test --coverage",
    "--cov-fail-under": "pytest-cov: use [test] coverage_threshold",
    "--lf": _NO_CACHE,
    "--last-failed": _NO_CACHE,
    "--ff": _NO_CACHE,
    "--failed-first": _NO_CACHE,
    "--lfnf": _NO_CACHE,
    "--last-failed-no-failures": _NO_CACHE,
    "--sw": _NO_CACHE,
    "--stepwise": _NO_CACHE,
    "--sw-skip": _NO_CACHE,
    "--stepwise-skip": _NO_CACHE,
    "--cache-show": _NO_CACHE,
    "--pdb": "no debugger integration",
    "--pdbcls": "no debugger integration",
    "--trace": "no debugger integration",
    "--setup-only": "rt runs the tests it sets up",
    "--setup-plan": "rt runs the tests it sets up",
    "--fixtures": "rt test lists no fixtures",
    "--funcargs": "rt test lists no fixtures",
    "--fixtures-per-test": "rt test lists no fixtures",
    "--markers": "rt test lists no markers",
    "--sw-reset": _NO_CACHE,
    "--stepwise-reset": _NO_CACHE,
    "--setuponly": "rt runs the tests it sets up",
    "--setupplan": "rt runs the tests it sets up",
    "--max-warnings": "rt does not fail a run on its number of warnings",
    "--collect-in-virtualenv": "rt does not collect inside virtual environments",
    "--noconftest": "rt loads the conftest.py files",
    "--disable-plugin-autoload": "set PYTEST_DISABLE_PLUGIN_AUTOLOAD=1",
    "--assert": "rt rewrites the asserts of test modules and conftest.py files",
    "--log-disable": "not read by rt",
}
#: where pytest-timeout's ``--timeout SECONDS`` of ``addopts`` / ``PYTEST_ADDOPTS`` is kept among the
#: configuration's values (a name no ini option can have: it wins over the ``timeout`` ini value)
TIMEOUT_OPTION = "--timeout"
#: where ``--import-mode`` is kept among the configuration's values: rt imports under "prepend" mode's names
#: in each mode, but only "prepend" and "append" refuse two test files of one module name (importing.py)
IMPORT_MODE_OPTION = "--import-mode"
#: where ``--confcutdir DIR`` is kept among the configuration's values: no conftest.py above DIR is loaded
CONFCUTDIR_OPTION = "--confcutdir"
#: the reason given for an option neither rt nor a plugin or conftest.py of the run registers
UNKNOWN = "not an option rt knows"
#: options rt reads itself that a plugin registers, not pytest: in ``addopts`` pytest refuses each of them
#: ("unrecognized arguments", status 4) when that plugin is not installed (pytest-timeout, pytest-xdist,
#: pytest-rerunfailures, pytest-cov, pytest-asyncio, anyio), and so does rt
PLUGIN_OPTIONS = frozenset(
    {
        "--timeout",
        "-n",
        "--numprocesses",
        "--dist",
        "--maxprocesses",
        "--reruns",
        "--reruns-delay",
        "--cov",
        "--cov-fail-under",
        "--cov-report",
        "--cov-config",
        "--no-cov",
        "--no-cov-on-fail",
        "--asyncio-mode",
        "--anyio-mode",
    }
)
#: ``--capture``'s methods besides ``no`` (pytest's)
CAPTURE_METHODS = ("fd", "sys", "tee-sys")
#: ``--doctest-report``'s choices (pytest's; any case)
DOCTEST_REPORTS = ("udiff", "cdiff", "ndiff", "only_first_failure", "none")
#: options that take a value (so the next word is not an option of its own)
TAKE_VALUE = (
    DISPLAY_OPTIONS
    | CONFIG_OPTIONS
    | {
        "-m",
        "-k",
        "-p",
        "-W",
        "--pythonwarnings",
        "-o",
        "--override-ini",
        "--maxfail",
        "--capture",
        "-n",
        "--numprocesses",
        "--dist",
        "--import-mode",
        "--confcutdir",
        "--doctest-glob",
        "--doctest-report",
        "--reruns",
        "--timeout",
        "--color",
        "--junitxml",
        "--junit-xml",
        "--log-level",
        "--log-cli-level",
        "--log-cli-format",
        "--log-cli-date-format",
        "--pdbcls",
        "--cov-fail-under",
        "--asyncio-mode",
        "--anyio-mode",
        "--ignore",
        "--ignore-glob",
        "--deselect",
        "--max-warnings",
        "--assert",
        "--log-disable",
        "--basetemp",
    }
)
#: options whose value is optional (``--cov`` alone or ``--cov=pkg``): only the ``=`` form takes one
_OPTIONAL_VALUE = frozenset({"--cov"})


# eq=False: never compared, so no __eq__/__hash__ to compile (0.7 M instructions less at import)
@attrs.frozen(eq=False)
class AddOpts:
    """What rt takes from pytest's options (``addopts``, ``PYTEST_ADDOPTS`` or ``rt test``'s command line);
    the command line wins over each of these."""

    keyword: str | None = None
    markexpr: str | None = None
    bail: int | None = None
    no_capture: bool = False
    doctest_modules: bool = False
    #: ``--doctest-glob`` patterns, ``--doctest-continue-on-failure``, ``--doctest-report``,
    #: ``--doctest-ignore-import-errors`` (see :class:`~rt_testrunner.pyconfig.PytestConfig`)
    doctest_globs: tuple[str, ...] = ()
    doctest_continue_on_failure: bool = False
    doctest_report: str | None = None
    doctest_ignore_import_errors: bool = False
    #: ``--continue-on-collection-errors`` (pytest's): a module that fails to import does not stop the run
    continue_on_collection_errors: bool = False
    #: ``-W`` filters, applied after the configuration's ``filterwarnings`` (so they win, as in pytest)
    warnings: tuple[str, ...] = ()
    #: ``-o name=value``
    overrides: tuple[tuple[str, str], ...] = ()
    #: (option as written, reason) of each option rt does not honour
    unsupported: tuple[tuple[str, str], ...] = ()
    #: (option word as written, without a separate value: ``--timeout=30``, ``--nbmake``; option name) of
    #: each option pytest does not register itself, in order: each is pytest's "unrecognized arguments"
    #: unless a plugin or conftest.py registers it (:data:`PLUGIN_OPTIONS` and those rt does not know)
    foreign: tuple[tuple[str, str], ...] = ()
    #: ``--ignore`` paths, ``--ignore-glob`` patterns and ``--deselect`` node id prefixes (pytest's)
    ignore: tuple[str, ...] = ()
    ignore_globs: tuple[str, ...] = ()
    deselect: tuple[str, ...] = ()
    #: ``-p`` values given on the command line (``addopts``' own are read from it by the session)
    plugins: tuple[str, ...] = ()
    #: the words of the options rt does not know with the words after them (their values, as far as rt can
    #: tell), as written: where an option a plugin registers takes its value (pytest-metadata's ``--metadata
    #: KEY VALUE``)
    unknown_words: tuple[str, ...] = ()
    #: the words that are no option (``addopts = --doctest-modules stdnum tests``): paths the run starts from,
    #: before those of the command line, as pytest puts ``addopts`` before its arguments
    paths: tuple[str, ...] = ()
    #: ``--runxfail``: xfail marks and ``pytest.xfail()`` do nothing; the tests run and count as plain ones
    runxfail: bool = False
    #: ``--junitxml PATH``: rt's junit reporter writes PATH
    junitxml: str | None = None
    #: ``--reruns N`` (pytest-rerunfailures): rt's ``--retry N``
    reruns: int | None = None
    #: ``-n N|auto|logical`` (pytest-xdist): rt's ``--parallel`` (from the command line only: in ``addopts`` rt
    #: keeps its own choice of processes, which changes no outcome)
    workers: str | None = None
    #: ``--color yes|no|auto``: rt's colours on or off
    color: str | None = None
    #: ``--co`` / ``--collect-only`` (from the command line only): list the selected tests, run none
    collect_only: bool = False
    #: ``--pyargs``: the test paths are dotted module or package names (pyargs.py)
    pyargs: bool = False
    #: ``--disable-warnings``: no "warnings summary" section (its count stays)
    disable_warnings: bool = False
    #: ``-c FILE`` / ``--config-file FILE`` and ``--rootdir DIR`` (from the command line only)
    config_file: str | None = None
    rootdir: str | None = None
    #: ``--capture`` fd / sys / tee-sys (``no`` is ``no_capture``)
    capture_method: str | None = None
    #: ``--basetemp DIR``: the tests' temporary folders go there (temp_paths.py)
    basetemp: str | None = None
    #: ``-v`` counted (``-vv`` is 2, ``-q`` takes one off, ``--verbosity=N`` adds N): how much detail an
    #: assertion's explanation gives (reprs in full at 2, as pytest's)
    verbose: int = 0

    def notice(self, config: PytestConfig) -> str | None:
        """The one line telling the user which options of their configuration rt does not honour, before the
        run: those rt itself does not have (``-n``, ``--cov`` ...). An option nothing registers is not in it:
        pytest refuses to start with it (:meth:`unrecognized`)."""
        entries = [(option, reason) for option, reason in self.unsupported if reason != UNKNOWN]
        if not entries:
            return None
        where = config.inifile.name if config.inifile is not None else "the pytest configuration"
        listed = "; ".join(f"{option} ({reason})" for option, reason in entries)
        return f"rt test: ignoring addopts of {where}: {listed}"

    def unrecognized(self, registered: set[str]) -> list[str]:
        """Once the run's files are collected (every plugin and conftest.py has registered its options): the
        option words of ``addopts`` and ``PYTEST_ADDOPTS`` that nothing registered, as pytest names them in
        its usage error (``--timeout=30`` without pytest-timeout, ``--nbmake`` without nbmake)."""
        return [word for word, name in self.foreign if name not in registered]


def _words(config: PytestConfig) -> list[str]:
    value = config.values.get("addopts")
    if value is None:
        return []
    import shlex  # only for a project that has addopts

    if isinstance(value, str):
        return shlex.split(value)
    return [str(item) for item in value]  # a TOML list: each item is one argument, as pytest takes it


def option_words(config: PytestConfig) -> list[str]:
    """The words of ``addopts``, then of the ``PYTEST_ADDOPTS`` environment variable: pytest puts both before
    its command line's, so a CI job's ``PYTEST_ADDOPTS="-m 'not slow'"`` selects as ``addopts`` would."""
    words = _words(config)
    environ = os.environ.get("PYTEST_ADDOPTS", "")
    if environ:
        import shlex

        words = [*words, *shlex.split(environ)]
    return words


def read(config: PytestConfig) -> AddOpts:
    """The project's ``addopts`` and ``PYTEST_ADDOPTS``, sorted into what rt applies, ignores and does not
    support; an option a conftest.py or a plugin registers takes as many words as it registers
    (:func:`registered_arity`)."""
    words = option_words(config)
    return parse(words, command_line=False, arity=registered_arity(config, words))


def registered_arity(
    config: PytestConfig, words: Sequence[str] = (), root: Path | None = None
) -> Callable[[str], int | None]:
    """How many words an option takes that pytest's initial conftest.py files or the plugins (installed, or
    named by ``-p`` in ``words`` or on the command line) register, read from their sources before any of them
    loads (option_sources.py): pytest parses ``addopts`` once they have registered their options, so the word
    after a plugin's flag is a path (``addopts = --some-flag tests``), and the one after an option with a
    value is that value."""
    from rt_testrunner.pyplugins import p_values

    names = [*p_values(words), *config.plugin_options]
    root = Path.cwd() if root is None else root
    path = [*(str(config.rootdir / entry) for entry in config.args("pythonpath")), *sys.path]
    if str(root) not in path:
        path.insert(0, str(root))
    asked: Callable[[str], int | None] | None = None

    def ask(option: str) -> int | None:
        # option_sources is imported at the first option rt does not know itself: a run whose addopts hold
        # only rt's and pytest's options never loads it (test_a_plain_run_imports_only_what_it_needs)
        nonlocal asked
        if asked is None:
            from rt_testrunner import option_sources

            asked = option_sources.option_arity(root, config.rootdir, names, path)
        return asked(option)

    return ask


def _positive(value: str) -> int | None:
    return int(value) if value.isdigit() and int(value) > 0 else None


def parse(
    words: list[str], *, command_line: bool = True, arity: Callable[[str], int | None] | None = None
) -> AddOpts:
    """pytest's options in ``words``, sorted into what rt applies, ignores and does not support: one reading
    for ``addopts`` and for ``rt test``'s command line, so that an option means the same in both. Three mean
    something on the command line only: ``-n`` (in ``addopts``, rt keeps its own choice of processes, which
    changes no outcome, and says so), ``-c`` and ``--rootdir`` (``addopts`` is read from the configuration
    they choose; pytest ignores them there too). ``arity``: how many words an option rt does not know takes,
    as the conftest.py file or plugin that registers it says (None: nothing known of it; the words after it
    are then its values)."""
    fields: dict[str, Any] = {}
    doctest_globs: list[str] = []
    warnings: list[str] = []
    overrides: list[tuple[str, str]] = []
    unsupported: list[tuple[str, str]] = []
    foreign: list[tuple[str, str]] = []
    collection: dict[str, list[str]] = {"--ignore": [], "--ignore-glob": [], "--deselect": []}
    paths: list[str] = []
    unknown_words: list[str] = []
    #: the last option was one rt does not know: the words after it may be its values (``--repeat 3``,
    #: pytest-metadata's ``--metadata KEY VALUE``), which only the plugin that registers it tells
    unknown_open = False
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        if not word.startswith("-"):
            if unknown_open:
                unsupported[-1] = (f"{unsupported[-1][0]} {word}", UNKNOWN)
                unknown_words.append(word)
            else:
                paths.append(word)
            continue
        unknown_open = False
        name, equals, value = word.partition("=")
        has_value = bool(equals)
        if not has_value and name.startswith("-") and not name.startswith("--") and len(name) > 2:
            # -ra, -vv, -x, -pno:cacheprovider, -Werror, -kexpr: one letter and what follows it
            letter, rest = name[:2], name[2:]
            if letter in ("-v", "-q", "-l") and set(rest) <= {letter[1]}:
                if letter != "-l":
                    fields["verbose"] = fields.get("verbose", 0) + (1 if letter == "-v" else -1) * len(
                        name[1:]
                    )
                continue
            if letter in TAKE_VALUE:
                name, has_value, value = letter, True, rest
            elif letter in ("-x", "-s"):
                name = letter  # -xs and the like: rare enough to read as the first flag alone
        if name in TAKE_VALUE and not has_value:
            if index < len(words):
                value, has_value = words[index], True
                index += 1
        elif name in _OPTIONAL_VALUE and not has_value and not command_line:
            # pytest-cov's ``--cov src/pkg``: its optional value is the next word unless that is an option
            if index < len(words) and not words[index].startswith("-"):
                value, has_value = words[index], True
                index += 1
        if name in PLUGIN_OPTIONS and not command_line:
            foreign.append((word, name))  # ``--timeout`` of ``--timeout 30``, as pytest names it
        if name in ("-v", "--verbose", "-q", "--quiet"):
            fields["verbose"] = fields.get("verbose", 0) + (1 if name in ("-v", "--verbose") else -1)
        elif name == "--verbosity" and value.lstrip("-").isdigit():
            fields["verbose"] = fields.get("verbose", 0) + int(value)
        if name in ("--disable-warnings", "--disable-pytest-warnings"):
            fields["disable_warnings"] = True
        if name in DISPLAY_FLAGS or name in DISPLAY_OPTIONS:
            continue
        if name == "-p":
            continue  # blocks a plugin (no:NAME) or loads one: read by PytestSession.blocked_plugins/plugins
        if name == "-m":
            fields["markexpr"] = value
        elif name == "-k":
            fields["keyword"] = value
        elif name in ("-x", "--exitfirst"):
            fields["bail"] = 1
        elif name == "--maxfail":
            fields["bail"] = _positive(value)  # 0: no limit, as pytest's
        elif name in collection:
            collection[name].append(value)
        elif name == "--doctest-modules":
            fields["doctest_modules"] = True
        elif name == "--doctest-glob":
            doctest_globs.append(value)
        elif name == "--doctest-continue-on-failure":
            fields["doctest_continue_on_failure"] = True
        elif name == "--doctest-ignore-import-errors":
            fields["doctest_ignore_import_errors"] = True
        elif name == "--continue-on-collection-errors":
            fields["continue_on_collection_errors"] = True
        elif name == "--doctest-report":
            if value.lower() not in DOCTEST_REPORTS:
                unsupported.append((f"{name} {value}", f"not one of {', '.join(DOCTEST_REPORTS)}"))
            else:
                fields["doctest_report"] = value.lower()
        elif name == "-s" or (name == "--capture" and value == "no"):
            fields["no_capture"] = True
        elif name == "--capture":
            if value not in CAPTURE_METHODS:
                unsupported.append((f"{name} {value}", f"not one of {', '.join(CAPTURE_METHODS)}"))
            else:
                fields["capture_method"] = value
        elif name == "--basetemp":
            fields["basetemp"] = value
        elif name in ("-W", "--pythonwarnings"):
            warnings.append(value)
        elif name == "--log-level":
            overrides.append(("log_level", value))
        elif name in ("--log-cli-level", "--log-cli-format", "--log-cli-date-format"):
            overrides.append((name[2:].replace("-", "_"), value))  # live logging (live_log.py)
        elif name in (
            "--asyncio-mode",
            "--anyio-mode",
        ):  # pytest-asyncio's and anyio's modes win over the ini's
            overrides.append((name[2:].replace("-", "_"), value))
        elif name in (
            "--strict-markers",
            "--strict",
            "--strict-config",
        ):  # pytest 9's ini values of the names
            overrides.append((name[2:].replace("-", "_"), "true"))
        elif name in ("-o", "--override-ini") and "=" in value:
            key, _, setting = value.partition("=")
            overrides.append((key.strip(), setting))
        elif name in ("--co", "--collect-only", "--collectonly") and command_line:
            fields["collect_only"] = True
        elif name in ("--co", "--collect-only", "--collectonly"):
            unsupported.append((name, "give it on the command line: rt test --collect-only"))
        elif name == "--pyargs":
            fields["pyargs"] = True
        elif name == "--runxfail":
            fields["runxfail"] = True
        elif name in ("--junitxml", "--junit-xml"):
            fields["junitxml"] = value
        elif name == "--reruns" and value.isdigit():
            fields["reruns"] = int(value)
        elif name in ("-n", "--numprocesses") and command_line:
            fields["workers"] = value
        elif name in ("-n", "--numprocesses"):
            unsupported.append((f"{name} {value}", "pytest-xdist: use rt test --parallel=N"))
        elif name in CONFIG_OPTIONS and not command_line:
            continue
        elif name == "--color" and value in ("yes", "no", "auto"):
            fields["color"] = value
        elif name == "--confcutdir":
            overrides.append((CONFCUTDIR_OPTION, value))
        elif name == "--import-mode":
            overrides.append((IMPORT_MODE_OPTION, value))
        elif name == "--timeout":
            # pytest-timeout's, in seconds (on rt test's own command line --timeout is rt's, in milliseconds)
            overrides.append((TIMEOUT_OPTION, value))
        elif name in ("-c", "--config-file"):
            fields["config_file"] = value
        elif name == "--rootdir":
            fields["rootdir"] = value
        elif name in UNSUPPORTED or name in _OPTIONAL_VALUE:
            shown = word if not has_value or "=" in word else f"{name} {value}"
            unsupported.append((shown, UNSUPPORTED[name]))
        else:
            unsupported.append((word if not has_value or "=" in word else f"{name} {value}", UNKNOWN))
            foreign.append((word, name))
            unknown_words.append(word)
            count = None if has_value or arity is None else arity(name)
            if count is None or count < 0:  # none known, or an open number (option_sources.OPEN)
                unknown_open = not has_value
            else:  # registered: its own number of values, and the words after them are paths
                for _ in range(count):
                    if index < len(words) and not words[index].startswith("-"):
                        unsupported[-1] = (f"{unsupported[-1][0]} {words[index]}", UNKNOWN)
                        unknown_words.append(words[index])
                        index += 1
    return AddOpts(
        doctest_globs=tuple(doctest_globs),
        warnings=tuple(warnings),
        overrides=tuple(overrides),
        unsupported=tuple(unsupported),
        foreign=tuple(foreign),
        ignore=tuple(collection["--ignore"]),
        ignore_globs=tuple(collection["--ignore-glob"]),
        deselect=tuple(collection["--deselect"]),
        paths=tuple(paths),
        unknown_words=tuple(unknown_words),
        **fields,
    )


def configured(config: PytestConfig, options: AddOpts) -> PytestConfig:
    """``config`` with the ``-o`` overrides and the ``-W`` filters of ``addopts`` in its values, and the
    doctest options."""
    config = attrs.evolve(
        config,
        doctest_modules=config.doctest_modules or options.doctest_modules,
        doctest_globs=(*config.doctest_globs, *options.doctest_globs),
        doctest_continue_on_failure=config.doctest_continue_on_failure or options.doctest_continue_on_failure,
        doctest_report=options.doctest_report or config.doctest_report,
        doctest_ignore_import_errors=config.doctest_ignore_import_errors
        or options.doctest_ignore_import_errors,
        continue_on_collection_errors=config.continue_on_collection_errors
        or options.continue_on_collection_errors,
        runxfail=config.runxfail or options.runxfail,
        disable_warnings=config.disable_warnings or options.disable_warnings,
        ignore=(*config.ignore, *options.ignore),
        ignore_globs=(*config.ignore_globs, *options.ignore_globs),
        deselect=(*config.deselect, *options.deselect),
        plugin_options=(*config.plugin_options, *options.plugins),
        capture_method=options.capture_method or config.capture_method,
        basetemp=options.basetemp or config.basetemp,
        verbose=config.verbose + options.verbose,
    )
    if not options.overrides and not options.warnings:
        return config
    values = dict(config.values)
    for key, setting in options.overrides:
        values[key] = setting
    if options.warnings:
        values["filterwarnings"] = [
            *attrs.evolve(config, values=values).lines("filterwarnings"),
            *options.warnings,
        ]
    return attrs.evolve(config, values=values)


def plugin_words(pyconfig: PytestConfig) -> list[str]:
    """The words of ``addopts``, ``PYTEST_ADDOPTS`` and the command line's ``-p`` options: where pytest reads
    which plugins to load or block."""
    words = option_words(pyconfig)
    for value in pyconfig.plugin_options:
        words += ["-p", value]
    return words
