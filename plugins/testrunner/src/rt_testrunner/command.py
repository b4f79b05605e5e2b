"""``rt test``: the command-line surface (every flag of the spec's table), validation, and the run itself."""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from rt_testrunner import addopts
from rt_testrunner.discovery import (
    PATTERNS,
    DiscoveryError,
    Patterns,
    discover,
    is_explicit_path,
    looks_like_path,
    parse_shard,
    shard,
)

if TYPE_CHECKING:
    from rt_testrunner.pyconfig import PytestConfig

# REFERENCE.md: usage errors exit 1, like failures (the reference runtime makes no difference)
EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 1


class UsageError(Exception):
    """A bad flag value: printed as ``error: <message>``, exit code 1 (as the reference runtime)."""

    #: the run's exit status
    status = EXIT_USAGE


class PytestUsageError(UsageError):
    """What pytest refuses to start with, as a usage error (``--pyargs`` of a name that does not import):
    exit status 4, pytest's, so that a script comparing both runners' statuses sees the same."""

    status = 4  # pytest's ExitCode.USAGE_ERROR (exit_status.USAGE_ERROR, a module start-up does not import)


def _check_retention(project: PytestConfig) -> None:
    """pytest refuses to start with a bad ``tmp_path_retention_count`` or ``_policy`` (its tmpdir plugin
    reads them when configured, whether a test asks for a folder or not): so does ``rt test``, with its
    status and words, before any test runs."""
    from rt_testrunner.temp_paths import RetentionError, retention

    try:
        retention(project.values, project.inifile)
    except RetentionError as exc:
        refused = PytestUsageError(str(exc))
        refused.status = exc.status
        raise refused from None


def _check_native_types(project: PytestConfig, *, choices_only: bool = False) -> None:
    """pytest's type check of the native ``[tool.pytest]`` table (:mod:`rt_testrunner.pytoml_types`), made
    before anything reads a value of it (``testpaths``, ``addopts``, ``minversion``, ``required_plugins`` are
    read while the run's paths and options are worked out): a wrong type is pytest's usage error, status 4,
    never a crash inside the code that reads it (``testpaths = "."``); so is a value none of an option's fixed
    choices, in any configuration file or ``-o``."""
    if project.inifile is None:  # no configuration file, nothing to check: pytoml_types is not even imported
        return
    from rt_testrunner.pytoml_types import choice_error, native_type_error

    native = project.inifile.suffix == ".toml" and not choices_only
    refused = (native_type_error(project) if native else None) or choice_error(project)
    if refused is not None:
        raise PytestUsageError(refused)


def configure(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
    add(
        "filters",
        nargs="*",
        metavar="FILTER",
        help="path fragments selecting test files (no globs); ./path or /path runs that file",
    )
    add("--timeout", metavar="MS", help="per-test time-out in milliseconds (default 5000)")
    add("--rerun-each", metavar="N", help="run each test file N times")
    add("--retry", metavar="N", help="retry failed tests up to N times")
    add("--concurrent", action="store_true", default=None, help="run tests concurrently, except test.serial")
    add("--max-concurrency", metavar="N", help="most tests running at once (default 20, 0 = unlimited)")
    add("--randomize", action="store_true", default=None, help="run files and tests in random order")
    add("--seed", metavar="N", help="seed of --randomize (implies it)")
    add("--bail", nargs="?", const="1", metavar="N", help="stop after N failures (1 when given alone)")
    add("--todo", action="store_true", default=None, help="also run tests marked todo")
    add("-t", "--test-name-pattern", metavar="REGEX", help="run only tests whose full name matches")
    add(
        "-k",
        dest="keyword",
        metavar="EXPRESSION",
        help="pytest's keyword expression: names (substrings of test, class, module names and marks) with "
        "not/and/or",
    )
    add("-m", dest="markexpr", metavar="MARKEXPR", help="pytest's mark expression, e.g. 'not slow'")
    add(
        "-s",
        "--no-capture",
        dest="no_capture",
        action="store_true",
        help="do not capture the tests' output (stdout, stderr, logging)",
    )
    add("--only", action="store_true", help="run only tests and describes marked .only")
    add("--pass-with-no-tests", action="store_true", help="exit 0 when no test is found")
    add("--shard", metavar="K/N", help="run the K-th of N deterministic parts of the suite")
    add("--preload", action="append", metavar="PATH", help="script loaded before the tests (repeatable)")
    add(
        "--reporter",
        action="append",
        metavar="NAME[,NAME]",
        help="reporters to run besides the automatic "
        "ones: dots, junit (needs --reporter-outfile), github, agent, or one registered by a plugin",
    )
    add(
        "--reporter-outfile",
        action="append",
        metavar="PATH",
        help="output file of the --reporter that writes one (repeat for several, in the order of --reporter)",
    )
    add("--dots", action="store_true", help="shorthand for --reporter=dots")
    add(
        "--coverage",
        action="store_true",
        default=None,
        help="measure coverage with coverage.py (test files and installed packages left out)",
    )
    add(
        "--coverage-reporter",
        action="append",
        metavar="text|lcov",
        help="coverage output: text (a table on "
        "stderr, the default) and/or lcov (<coverage-dir>/lcov.info); repeatable; implies --coverage",
    )
    add(
        "--coverage-dir",
        metavar="DIR",
        help="directory of the lcov file (default coverage); implies --coverage",
    )
    add(
        "--coverage-branch",
        action="store_true",
        default=None,
        help="measure branches too (a %% Branch column)",
    )
    add(
        "-u",
        "--update-snapshots",
        action="store_true",
        help="rewrite snapshots that differ and remove obsolete ones (refused in CI)",
    )
    add(
        "--parallel",
        nargs="?",
        const="",
        metavar="N",
        help="run test files in N worker processes (default: the number of CPU cores)",
    )
    add(
        "--parallel-delay",
        metavar="MS",
        help="milliseconds the first --parallel worker must be busy before the others start "
        "(0 starts all at once; default 5)",
    )
    add(
        "--timings",
        action="append",
        metavar="FILE",
        help="JSON file(s) of per-file durations (ms), merged: --parallel starts the slowest files first",
    )
    add(
        "--update-timings",
        action="store_true",
        help="after the run, write the measured per-file durations to the first --timings file",
    )
    add(
        "--doctest-modules", action="store_true", help="pytest's: every module's docstring examples are tests"
    )
    add(
        "--doctest-glob",
        action="append",
        metavar="PATTERN",
        help="pytest's: text files whose examples are tests (repeatable; default test*.txt)",
    )
    add(
        "--doctest-continue-on-failure",
        action="store_true",
        help="pytest's: a doctest runs all its examples after one fails",
    )
    add(
        "--doctest-report",
        type=str.lower,
        choices=("udiff", "cdiff", "ndiff", "only_first_failure", "none"),
        help="pytest's: how a failed doctest shows expected against actual output (default udiff)",
    )
    add(
        "--doctest-ignore-import-errors",
        action="store_true",
        help="pytest's: a module that fails to import for its doctests is skipped",
    )
    add(
        "--ignore",
        action="append",
        metavar="PATH",
        help="pytest's: leave PATH out of the collection (repeatable)",
    )
    add(
        "--ignore-glob",
        action="append",
        metavar="PATTERN",
        help="pytest's: leave the paths matching PATTERN out of the collection (repeatable)",
    )
    add(
        "--deselect",
        action="append",
        metavar="NODEID_PREFIX",
        help="pytest's: leave out the tests whose node id starts with NODEID_PREFIX (repeatable)",
    )
    add(
        "--continue-on-collection-errors",
        action="store_true",
        help="pytest's: run the tests even when a test module fails to import (pytest, and rt for"
        " pytest-style files, otherwise stop before the first test)",
    )
    add(
        "-W",
        "--pythonwarnings",
        dest="pythonwarnings",
        action="append",
        metavar="FILTER",
        help="pytest's: a warnings filter (error::DeprecationWarning), after the configuration's filterwarnings"
        " and addopts (repeatable)",
    )
    add(
        "-o",
        "--override-ini",
        dest="override_ini",
        action="append",
        metavar="NAME=VALUE",
        help="pytest's: a configuration value that wins over the project's (repeatable)",
    )
    add(
        "-p",
        dest="plugins",
        action="append",
        metavar="NAME",
        help="pytest's: -p no:NAME blocks plugin NAME (an installed one, or pytest's own: logging, capture,"
        " warnings, cacheprovider ...); -p MODULE loads MODULE as a plugin (repeatable)",
    )
    add(
        "--watch",
        action="store_true",
        help="run, then re-run the affected test files when a file changes "
        "(watchfiles; a fresh process per run)",
    )
    _pytest_options(parser)


class _PytestWord(argparse.Action):
    """Keeps a pytest option as it was written (``--tb=short``), in order, for :func:`addopts.parse`: the
    command line is then read as ``addopts`` is, so an option means the same in both."""

    def __call__(
        self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any, option: Any = None
    ) -> None:
        words = list(getattr(namespace, self.dest, None) or ())
        words.append(str(option) if values is None or values == [] else f"{option}={values}")
        setattr(namespace, self.dest, words)


#: pytest's options ``rt test`` reads (the ones it has already, -k, -m, -s, -W, -o, the doctest options,
#: --ignore and --deselect, are its own arguments above): (names, takes a value, help or None to hide it)
_PYTEST_OPTIONS: tuple[tuple[tuple[str, ...], bool, str | None], ...] = (
    (("-x", "--exitfirst"), False, "pytest's: stop after the first failure (--bail)"),
    (("--maxfail",), True, "pytest's: stop after N failures (--bail=N)"),
    (("-n", "--numprocesses"), True, "pytest-xdist's: N worker processes, or auto (--parallel=N)"),
    (("--reruns",), True, "pytest-rerunfailures': retry failed tests N times (--retry=N)"),
    (("--junitxml", "--junit-xml"), True, "pytest's: write a JUnit XML report (--reporter=junit)"),
    (("--runxfail",), False, "pytest's: run xfail tests as if they were not marked"),
    (("-c", "--config-file"), True, "pytest's: read the pytest configuration from FILE"),
    (("--rootdir",), True, "pytest's: the rootdir node ids and module names are relative to"),
    (("--strict-markers", "--strict"), False, "pytest's: an unregistered mark is an error"),
    (("--strict-config",), False, "pytest's: a configuration name nothing registers is an error"),
    (("--capture",), True, "pytest's: no turns capture off (-s); fd, sys and tee-sys capture"),
    (("--log-level",), True, "pytest's: the level caplog and captured logging keep"),
    (("--log-cli-level",), True, "pytest's: live logging, records at LEVEL shown as they happen"),
    (("--log-cli-format",), True, None),
    (("--log-cli-date-format",), True, None),
    (("--asyncio-mode",), True, "pytest-asyncio's: auto or strict"),
    (("--color",), True, "pytest's: yes, no or auto"),
    (("--pyargs",), False, "pytest's: the test paths are dotted module or package names"),
    (("--confcutdir",), True, "pytest's: load no conftest.py above DIR"),
    (("--basetemp",), True, "pytest's: the tests' temporary folders go in DIR (emptied first, kept after)"),
    (("--import-mode",), True, "pytest's: prepend, append or importlib (test files may share a basename)"),
    # accepted and ignored: they change only how pytest displays a run (rt's display is its own)
    *(((name,), False, None) for name in sorted(addopts.DISPLAY_FLAGS)),
    *(((name,), True, None) for name in sorted(addopts.DISPLAY_OPTIONS)),
    # refused, each with its reason (addopts.UNSUPPORTED); --timeout is rt's own here (milliseconds), while
    # in addopts it is pytest-timeout's (seconds)
    *(((name,), name != "--cov" and name in addopts.TAKE_VALUE, None) for name in addopts.UNSUPPORTED),
    (("--co", "--collect-only"), False, "pytest's: list the selected tests' node ids, run none"),
)


def _pytest_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "pytest's options",
        "pytest's own flags, read as in a project's addopts. Display-only ones (-q, -v, -r, --tb, -l, "
        "--durations, --setup-show, --no-header, --disable-warnings ...) are accepted and ignored; those with "
        "no meaning in rt (--lf, --ff, --pdb, --cov, --setup-only ...) are refused, with the reason.",
    )
    for names, takes_value, help_text in _PYTEST_OPTIONS:
        group.add_argument(
            *names,
            dest="pytest_words",
            action=_PytestWord,
            nargs=None if takes_value else (0 if names[0] != "--cov" else "?"),
            metavar="VALUE",
            help=help_text if help_text is not None else argparse.SUPPRESS,
        )


def _positive_int(text: str, what: str, *, allow_zero: bool = False) -> int:
    try:
        value = int(text)
    except (TypeError, ValueError):
        raise UsageError(f"Invalid {what}: {text!r} (expected a whole number)") from None
    if value < 0 or (value == 0 and not allow_zero):
        bound = "0 or more" if allow_zero else "greater than 0"
        raise UsageError(f"Invalid {what}: {text!r} (expected a number {bound})")
    return value


def _timeout(text: str) -> int:
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise UsageError(f"Invalid timeout: {text!r} (expected a number of milliseconds)") from None
    if not (math.isfinite(value) and value > 0):
        raise UsageError(f"Invalid timeout: {text!r} (expected a number of milliseconds greater than 0)")
    return max(1, round(value))


# eq=False: never compared, so no __eq__/__hash__ to compile (0.7 M instructions less at import)
@attrs.frozen(eq=False)
class Invocation:
    """The parsed command line: what to select, how to run, how to report."""

    run: Any  # RunOptions (imported lazily)
    filters: tuple[str, ...]
    shard: tuple[int, int] | None
    reporters: tuple[str, ...]
    outfiles: tuple[str, ...]
    pass_with_no_tests: bool
    coverage: Any = None  # CoverageOptions when --coverage / [test] coverage is on
    parallel: int | None = None  # --parallel: the number of worker processes
    parallel_delay_ms: int = 5
    timings: tuple[str, ...] = ()
    update_timings: bool = False
    color: str | None = None  # pytest's --color yes/no/auto (command line, then addopts)
    collect_only: bool = False  # pytest's --co/--collect-only: list the selected tests, run none


def cpu_count() -> int:
    """The cores this process may use (its affinity mask where the system has one), as the reference's
    default for ``--parallel``."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def _xdist_workers(value: str) -> int | None:
    """pytest-xdist's ``-n``: a number (0: no workers, one process), ``auto`` or ``logical`` (the cores)."""
    if value in ("auto", "logical"):
        return cpu_count()
    if not value.isdigit():
        raise UsageError(f"-n/--numprocesses expects a number, auto or logical, received {value!r}")
    return int(value) or None


def _parallel(
    args: argparse.Namespace, xdist: str | None = None
) -> tuple[int | None, int, tuple[str, ...], bool]:
    """``--parallel[=N]`` (or pytest-xdist's ``-n N``), ``--parallel-delay``, ``--timings``,
    ``--update-timings``, in the reference's words when a value is wrong."""
    workers = None
    if args.parallel is None and xdist is not None:
        workers = _xdist_workers(xdist)
    if args.parallel is not None:
        if args.parallel == "":
            workers = cpu_count()
        else:
            try:
                workers = int(args.parallel)
            except ValueError:
                workers = 0
            if workers < 1:
                raise UsageError(f'--parallel expects a positive integer, received "{args.parallel}"')
    delay = 5
    if args.parallel_delay is not None:
        try:
            delay = int(args.parallel_delay)
        except ValueError:
            delay = -1
        if delay < 0:
            raise UsageError(
                "--parallel-delay expects a non-negative integer (milliseconds), "
                f'received "{args.parallel_delay}"'
            )
    timings = tuple(args.timings or ())
    if args.update_timings and not timings:
        raise UsageError("--update-timings needs --timings=<file> (where to write them)")
    if timings:
        from rt_testrunner import timings as timing_files

        try:
            timing_files.load(timings, Path.cwd())
        except timing_files.TimingsError as exc:
            raise UsageError(str(exc)) from None
    return workers, delay, timings, bool(args.update_timings)


def parse_invocation(
    args: argparse.Namespace, config: Any, root: Path, words: Sequence[str] | None = None
) -> Invocation:
    """Validate flags and merge them over ``[test]`` config (flags win). Raises :class:`UsageError`.
    ``words``: the command line after ``test`` as typed, where the value of an option a plugin registers is
    told from a test path (:func:`_plugin_options`)."""
    from rt_testrunner import pyconfig
    from rt_testrunner.options import RunOptions

    given = _command_line_settings(args)  # pytest's options on the command line (usage errors first)
    given = _with_environment_config(given)
    try:
        project = _load_project(root, given)
    except pyconfig.ConfigError as exc:
        raise UsageError(str(exc)) from None
    project = attrs.evolve(project, ini_keys=frozenset(project.values))
    if any(name == "addopts" for name, _ in given.overrides):  # `-o addopts=...` replaces them, as in pytest
        project = attrs.evolve(
            project, values={**project.values, **{n: v for n, v in given.overrides if n == "addopts"}}
        )
    _check_native_types(project)
    extra = addopts.read(project)  # the project's addopts; the command line wins over each
    project = addopts.configured(_doctest_options(args, addopts.configured(project, extra)), given)
    # again for the fixed choices, with the values of ``-o`` (the file's types were checked above)
    _check_native_types(project, choices_only=True)
    filters, plugin_words = _plugin_options(
        list(getattr(args, "extra_options", None) or ()), words or (), list(args.filters), root, project
    )
    filters = [*_addopts_paths(extra.paths, root), *filters]
    project = attrs.evolve(
        project,
        command_line_options=tuple(plugin_words),
    )
    if given.pyargs or extra.pyargs:
        from rt_testrunner import pyargs

        try:
            filters = pyargs.resolve(filters, root, run_sys_path(project, root))
        except pyargs.PackageNotFoundError as exc:
            raise PytestUsageError(str(exc)) from None
    initial = _initial_paths(filters, project, root)
    chosen_apart = given.config_file is not None or given.rootdir is not None or given.pyargs or extra.pyargs
    project = attrs.evolve(
        project,
        # only where pytest's node ids use them: the rootdir chosen apart from the tests (-c, --rootdir), or
        # tests found by their module names (--pyargs), which may live outside the rootdir
        initial_paths=initial if chosen_apart else (),
        initial_conftest_dirs=_initial_conftest_dirs(initial),
    )
    try:
        project.log_level  # noqa: B018 - read now, so a bad value is a usage error before any test runs
    except pyconfig.ConfigError as exc:
        raise UsageError(str(exc)) from None
    if "tmp_path_retention_count" in project.values or "tmp_path_retention_policy" in project.values:
        _check_retention(project)
    notice = extra.notice(project)
    if notice is not None:
        print(notice, file=sys.stderr)
    timeout = _timeout(args.timeout) if args.timeout is not None else config.get("test.timeout", 5000)
    if not isinstance(timeout, int) or timeout <= 0:
        raise UsageError(f"Invalid timeout: {timeout!r} (from [test] timeout)")
    retry = (
        _positive_int(args.retry, "retry", allow_zero=True)
        if args.retry is not None
        else config.get("test.retry", 0)
    )
    if retry < 0:
        raise UsageError(f"Invalid retry: {retry!r} (from [test] retry; expected 0 or more)")
    if args.retry is None and given.reruns is not None:
        retry = given.reruns  # pytest-rerunfailures' --reruns N on the command line
    elif args.retry is None and extra.reruns is not None:
        retry = max(retry, extra.reruns)
    rerun_each = _positive_int(args.rerun_each, "rerun-each") if args.rerun_each is not None else 1
    max_concurrency = (
        _positive_int(args.max_concurrency, "max-concurrency", allow_zero=True)
        if args.max_concurrency is not None
        else config.get("test.max_concurrency", 20)
    )
    if not isinstance(max_concurrency, int) or max_concurrency < 0:
        raise UsageError(
            f"Invalid max-concurrency: {max_concurrency!r} (from [test] max_concurrency; expected 0 or more)"
        )
    bail = None
    if args.bail is not None:
        try:
            bail = int(args.bail)
        except ValueError:
            bail = 0
        if bail < 1:
            raise UsageError(f"Invalid --bail value: {args.bail!r} (expected a number greater than 0)")
    seed = None
    if args.seed is not None:
        try:
            seed = int(args.seed)
        except ValueError:
            raise UsageError(f"Invalid seed: {args.seed!r} (expected a whole number)") from None
        if seed < 0:
            raise UsageError(f"Invalid seed: {args.seed!r} (expected 0 or more)")
    elif args.randomize or (args.randomize is None and config.get("test.randomize", False)):
        import random  # only for --randomize

        seed = random.SystemRandom().randrange(2**31)
    pattern = None
    if args.test_name_pattern is not None:
        try:
            pattern = re.compile(args.test_name_pattern)
        except re.error as exc:
            raise UsageError(f"Invalid test name pattern {args.test_name_pattern!r}: {exc}") from None
    from rt_testrunner.reporter_setup import TERMINAL_REPORTERS, ReporterSetupError, parse_names

    try:
        reporters = parse_names(args.reporter, args.dots)
    except ReporterSetupError as exc:
        raise UsageError(str(exc)) from None
    outfiles = tuple(args.reporter_outfile or ())
    junitxml = given.junitxml or extra.junitxml
    if junitxml and "junit" not in reporters:
        # pytest's --junitxml PATH: rt's junit reporter writing PATH (after the outfiles of the others)
        reporters, outfiles = (*reporters, "junit"), (*outfiles, junitxml)
    if outfiles and not [name for name in reporters if name not in TERMINAL_REPORTERS]:
        # the spec: "Output file for the reporter; required with --reporter". The default console output
        # goes to the terminal, so an outfile alone would be dropped without a word and the user would look
        # for a report that was never written.
        raise UsageError(
            f"--reporter-outfile {outfiles[0]!r} needs --reporter <name> (e.g. "
            "--reporter=junit): the default console output is not written to a file"
        )
    file_reporters = [name for name in reporters if name not in TERMINAL_REPORTERS]
    if "junit" in reporters and file_reporters.index("junit") >= len(outfiles):
        raise UsageError("--reporter=junit requires --reporter-outfile <path>")
    for outfile in outfiles:
        if (root / outfile).is_dir():
            raise UsageError(f"--reporter-outfile {outfile!r} is a directory; give a file path")
    coverage = _coverage_options(args, config)
    preload = tuple(args.preload) if args.preload else tuple(config.get("test.preload", ()) or ())
    for script in preload:
        if not (root / script).is_file():
            raise UsageError(f"preload script not found: {script!r}")
    todo = args.todo if args.todo is not None else config.get("test.todo", False)
    concurrent = args.concurrent if args.concurrent is not None else config.get("test.concurrent", False)
    keyword = args.keyword or extra.keyword
    markexpr = args.markexpr or extra.markexpr
    if bail is None:
        bail = given.bail if given.bail is not None else extra.bail
    for flag, text in (("-k", keyword), ("-m", markexpr)):
        if text:
            from rt_testrunner import expression  # only for -k/-m: one module less in a plain run

            try:
                expression.parse(text)
            except expression.ExpressionError as exc:
                raise UsageError(f"Invalid {flag} expression: {exc}") from None
    run = RunOptions(
        root=root,
        timeout_ms=timeout,
        explicit_timeout=args.timeout is not None,
        rerun_each=rerun_each,
        retry=retry,
        concurrent=bool(concurrent),
        max_concurrency=max_concurrency,
        seed=seed,
        bail=bail,
        todo=bool(todo),
        name_pattern=pattern,
        only=args.only,
        preload=preload,
        keyword=keyword or None,
        markexpr=markexpr or None,
        capture=not (args.no_capture or given.no_capture or extra.no_capture),
        pyconfig=project,
    )
    shard_spec = None
    if args.shard is not None:
        try:
            shard_spec = parse_shard(args.shard)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    workers, delay, timings, update_timings = _parallel(args, given.workers)
    return Invocation(
        run,
        tuple(filters),
        shard_spec,
        reporters,
        outfiles,
        args.pass_with_no_tests,
        coverage,
        workers,
        delay,
        timings,
        update_timings,
        given.color or extra.color,
        given.collect_only,
    )


def _command_line_settings(args: argparse.Namespace) -> Any:
    """pytest's options given to ``rt test``, read as ``addopts`` is (:func:`addopts.parse`), with its own
    ``-W`` filters and ``-o name=value`` settings: applied after the configuration's and its ``addopts``', so
    they win, as pytest's command line does (a tox.ini's ``pytest -W error``). An option rt does not have is
    a usage error, with the reason."""
    given = addopts.parse(list(getattr(args, "pytest_words", None) or ()))
    if given.unsupported:
        option, reason = given.unsupported[0]
        raise UsageError(f"{option} is not supported by rt test: {reason}")
    if given.workers is not None:
        _xdist_workers(given.workers)  # a bad -n value is a usage error now
    overrides = list(given.overrides)
    for setting in getattr(args, "override_ini", None) or ():
        name, equals, value = setting.partition("=")
        if not equals or not name.strip():
            raise UsageError(f"-o/--override-ini expects option=value style (got: {setting!r})")
        overrides.append((name.strip(), value))
    return attrs.evolve(
        given,
        warnings=(*given.warnings, *(getattr(args, "pythonwarnings", None) or ())),
        overrides=tuple(overrides),
        ignore=tuple(getattr(args, "ignore", None) or ()),
        ignore_globs=tuple(getattr(args, "ignore_glob", None) or ()),
        deselect=tuple(getattr(args, "deselect", None) or ()),
        plugins=tuple(getattr(args, "plugins", None) or ()),
    )


def _plugin_options(
    extra: list[str], words: Sequence[str], filters: list[str], root: Path, project: Any
) -> tuple[list[str], list[str]]:
    """The test paths, and the words of the options rt does not know (``extra``: a plugin's or a conftest.py's
    ``--runslow``, ``--level 3``), which take their values once the plugins register them, as pytest parses
    its command line after loading them. argparse took the word after such an option for a test path (or
    left it in ``extra``): it is the option's value unless it selects test files (an existing path, a
    fragment that matches some), since rt cannot know yet whether the option takes one; ``--level=3`` is
    never ambiguous. A flag that took a word is told once the plugins are loaded (pytest's "file or
    directory not found")."""
    if not extra:
        return filters, []

    def selects_files(word: str) -> bool:
        if is_explicit_path(word, root):
            return True
        try:
            return bool(discover(root, [word], _patterns(project, root)))
        except DiscoveryError:
            return False

    options: list[str] = []
    paths = list(filters)
    position = 0
    pending = list(extra)
    while pending:
        word = pending.pop(0)
        if not word.startswith("-") or word == "-":
            paths.append(word)  # a path argparse could not place (after an option it does not know)
            continue
        options.append(word)
        if "=" in word or word not in words[position:]:
            continue
        at = words.index(word, position)
        position = at + 1
        following = words[at + 1] if at + 1 < len(words) else None
        if following is None or following.startswith("-"):
            continue
        if selects_files(following) and not _registered_with_value(word, root, project):
            continue
        if pending and pending[0] == following:
            pending.pop(0)
        elif following in paths:
            paths.remove(following)
        else:
            continue
        options.append(following)
        position = at + 2
    return paths, options


def _registered_with_value(option: str, root: Path, project: Any) -> bool:
    """``option`` is registered with a value by one of the conftest.py files pytest loads before it parses its
    command line (the folder the run starts in, its parents up to the rootdir, its ``test*`` subfolders) or
    by a plugin, read from their source (option_sources.py): then the word after it is its value, as under
    pytest, even when that word names a test path (``--basedir tests``)."""
    return addopts.registered_arity(project, addopts.option_words(project), root)(option) not in (None, 0)


def _addopts_paths(words: tuple[str, ...], root: Path) -> list[str]:
    """The paths of ``addopts`` (python-stdnum's ``--doctest-modules stdnum tests``), which pytest puts before
    its command line's arguments: the run starts from them (``testpaths`` is then not read), and from those
    the command line names too. Each is a path, as pytest reads its arguments (never a fragment of one), so
    one that does not exist is pytest's usage error, status 4."""
    paths: list[str] = []
    for word in words:
        path = word.partition("::")[0]
        if not (root / path).exists():
            raise PytestUsageError(f"file or directory not found: {word}")
        paths.append(word if is_explicit_path(word, root) else f"./{word}")
    return paths


def _initial_paths(filters: list[str], project: Any, root: Path) -> tuple[Path, ...]:
    """The paths a pytest run starts from, as pytest's ``_initialpaths``: the paths given (a node id's file),
    else ``testpaths`` when run from the rootdir, else the folder rt runs in."""
    given = [
        Path(os.path.abspath(root / name.partition("::")[0]))
        for name in filters
        if is_explicit_path(name, root) and (root / name.partition("::")[0]).exists()
    ]
    if not given and not filters and project.rootdir == root:
        given = [path for entry in project.args("testpaths") for path in sorted(root.glob(entry))]
    return tuple(dict.fromkeys(given)) or (root,)


def _initial_conftest_dirs(initial: tuple[Path, ...]) -> frozenset[Path]:
    """The folders of pytest's initial conftest.py files: for each path the run starts from, its folder and
    their parents, and the ``test*`` subfolders of a folder, as pytest loads them before it collects."""
    folders: set[Path] = set()
    for anchor in initial:
        folder = anchor if anchor.is_dir() else anchor.parent
        folders.update((folder, *folder.parents))
        if anchor.is_dir():
            folders.update(child for child in anchor.glob("test*") if child.is_dir())
    return frozenset(folders)


def _requirements_refusal(project: Any, root: Path) -> str | None:
    """pytest's refusal to start when the configuration's ``minversion`` or ``required_plugins`` is not met
    (:mod:`rt_testrunner.pyrequirements`); read only when the configuration names either."""
    if not (project.values.get("minversion") or project.values.get("required_plugins")):
        return None
    from rt_testrunner import pyplugins, pyrequirements
    from rt_testrunner.addopts import plugin_words

    words = plugin_words(project)
    blocked = pyplugins.blocked_names(words)
    named = set(pyplugins.named_plugins(words))
    autoload = not os.environ.get(pyplugins.AUTOLOAD_OFF)
    plugins = [
        entry
        for entry in pyplugins.pytest11(run_sys_path(project, root))
        if entry.name not in blocked and (autoload or entry.name in named)
    ]
    return pyrequirements.refusal(project, plugins, pyrequirements.pytest_version())


def _refuse_missing_path(filters: Sequence[str], root: Path, project: Any) -> None:
    """In a pytest suite, an argument that looks like a path (``discovery.looks_like_path``), does not exist
    and selects no file as a fragment of one is pytest's usage error ``file or directory not found: X``,
    status 4, before any test: pytest reads every argument as a path. A fragment that selects files
    (``sub/api``) and a word without ``/``, ``::`` or ``.py`` stay the spec's file-name filter, and in a
    project of the spec's patterns only (no pytest configuration, no conftest.py) every argument keeps the
    reference runtime's meaning (spec C rules 1 and 2)."""
    missing = [
        word for word in filters if looks_like_path(word) and not (root / word.partition("::")[0]).exists()
    ]
    if not missing:
        return
    from rt_testrunner.exit_status import is_pytest_suite  # only then: one module less in a plain run

    patterns = _patterns(project, root)
    if not is_pytest_suite(project, discover(root, [], patterns)):
        return
    for word in missing:
        if "::" in word or not _selects_as_fragment(word, root, patterns):
            raise PytestUsageError(f"file or directory not found: {word}")


def _selects_as_fragment(word: str, root: Path, patterns: Patterns) -> bool:
    try:
        return bool(discover(root, [word], patterns))
    except DiscoveryError:  # ./x, /x: a path, which does not exist
        return False


def _unrecognized(project: Any, files: list[Any]) -> str | None:
    """Options rt does not know on the command line of a run that is not a pytest suite's: no plugin or
    conftest.py will register them, so they are a usage error now, before any test runs (a pytest suite's
    are checked once its plugins and conftest.py files are loaded, see PytestSession.unknown_options)."""
    options = [word for word in project.command_line_options if word.startswith("-")]
    if not options:
        return None
    from rt_testrunner.exit_status import is_pytest_suite  # only then: one module less in a plain run

    if is_pytest_suite(project, files):
        return None
    return f"unrecognized arguments: {' '.join(options)} (see `rt test --help`)"


def _with_environment_config(given: Any) -> Any:
    """``-c FILE`` / ``--rootdir DIR`` of ``PYTEST_ADDOPTS`` where the command line gives none: pytest puts
    that variable's words before its command line before it looks for its configuration, so there (unlike in
    ``addopts``, read from the configuration they would choose) they choose it."""
    environ = os.environ.get("PYTEST_ADDOPTS", "")
    if not environ or (given.config_file is not None and given.rootdir is not None):
        return given
    import shlex

    try:
        words = shlex.split(environ)
    except ValueError:
        return given
    found = addopts.parse(words)
    return attrs.evolve(
        given, config_file=given.config_file or found.config_file, rootdir=given.rootdir or found.rootdir
    )


def _load_project(root: Path, given: Any) -> Any:
    """The pytest configuration: the one pytest would find from ``root``, or ``-c FILE``'s (its folder the
    rootdir, as pytest's), with ``--rootdir DIR`` over its rootdir."""
    from rt_testrunner import pyconfig

    if given.config_file is not None:
        project = pyconfig.load_file(root / given.config_file)
    else:
        project = pyconfig.load(root)
    if given.rootdir is not None:
        rootdir = (root / os.path.expandvars(given.rootdir)).resolve()
        if not rootdir.is_dir():
            raise UsageError(f"Directory '{rootdir}' not found. Check your '--rootdir' option.")
        project = attrs.evolve(project, rootdir=rootdir)
    return project


def _doctest_options(args: argparse.Namespace, project: Any) -> Any:
    """pytest's doctest options given to ``rt test``, after those of ``addopts`` (globs add up, as pytest's
    command line adds to its addopts)."""
    return attrs.evolve(
        project,
        doctest_modules=project.doctest_modules or bool(getattr(args, "doctest_modules", False)),
        doctest_globs=(*project.doctest_globs, *(getattr(args, "doctest_glob", None) or ())),
        doctest_continue_on_failure=project.doctest_continue_on_failure
        or bool(getattr(args, "doctest_continue_on_failure", False)),
        doctest_report=getattr(args, "doctest_report", None) or project.doctest_report,
        doctest_ignore_import_errors=project.doctest_ignore_import_errors
        or bool(getattr(args, "doctest_ignore_import_errors", False)),
        continue_on_collection_errors=project.continue_on_collection_errors
        or bool(getattr(args, "continue_on_collection_errors", False)),
    )


def _coverage_options(args: argparse.Namespace, config: Any) -> Any:
    """``--coverage*`` flags over ``[test] coverage*`` config; ``None`` when coverage is off."""
    wanted = args.coverage or args.coverage_reporter or args.coverage_dir or args.coverage_branch
    if not wanted and not (args.coverage is None and config.get("test.coverage", False)):
        return None
    # only now: a run without coverage does not import (nor build the attrs classes of) coverage_run
    from rt_testrunner.coverage_run import REPORTERS, CoverageOptions

    reporters: list[str] = []
    for value in args.coverage_reporter or config.get("test.coverage_reporter", ["text"]) or ["text"]:
        for name in str(value).split(","):
            if name.strip() not in REPORTERS:
                raise UsageError(f"Invalid --coverage-reporter {name.strip()!r} (expected text or lcov)")
            reporters.append(name.strip())
    directory = args.coverage_dir or config.get("test.coverage_dir", "coverage")
    threshold = config.get("test.coverage_threshold", None)
    if threshold is not None and (
        isinstance(threshold, bool) or not isinstance(threshold, int | float) or not 0 <= threshold <= 1
    ):
        raise UsageError(
            f"Invalid coverage_threshold: {threshold!r} (from [test] coverage_threshold; expected "
            "a fraction from 0 to 1, e.g. 0.9)"
        )
    branch = (
        args.coverage_branch
        if args.coverage_branch is not None
        else config.get("test.coverage_branch", False)
    )
    return CoverageOptions(
        tuple(dict.fromkeys(reporters)),
        str(directory),
        bool(branch),
        float(threshold) if threshold is not None else None,
    )


def _patterns(project: Any, root: Path) -> Patterns:
    """pytest's file patterns and folders to skip; ``testpaths`` only when run from the rootdir (as pytest)."""
    from rt_testrunner.addopts import plugin_words
    from rt_testrunner.pyplugins import named_plugins

    testpaths: tuple[Path, ...] = ()
    if project.rootdir == root:
        testpaths = tuple(path for entry in project.args("testpaths") for path in sorted(root.glob(entry)))
    return Patterns(
        tuple(project.python_files),
        tuple(project.norecursedirs),
        testpaths,
        project.doctest_modules,
        project.doctest_patterns,
        pytest_project=project.inifile is not None,
        plugin_names=tuple(named_plugins(plugin_words(project))),
        plugin_path=tuple(run_sys_path(project, root)),
    )


def _collect_only(invocation: Invocation, files: list[Any], backend: str) -> int:
    """``--collect-only``, as ``pytest --co -q`` prints it: one node id per line on stdout, then the count;
    the files that failed to collect on stderr (exit status 2, as pytest's "Interrupted: N errors during
    collection"), 5 when no test is selected, else 0."""
    from rt_testrunner import clock
    from rt_testrunner.reporters import plural
    from rt_testrunner.runner import Runner

    started = clock.perf_counter()
    prepare_sys_path(invocation.run.pyconfig, invocation.run.root)
    runner = Runner(invocation.run, [], backend=backend)
    ids, errors = runner.collect_only(files)
    out = sys.stdout
    for nodeid in ids:
        out.write(nodeid + "\n")
    for relative, failure in errors:
        sys.stderr.write(f"\n{relative}:\nerror: {failure.details or failure.message}\n")
    took = clock.perf_counter() - started
    left_out = runner.filtered_out
    counted = (
        f"{len(ids)}/{plural(len(ids) + left_out, 'test')} collected ({left_out} deselected)"
        if left_out
        else plural(len(ids), "test") + " collected"
    ) + (f", {plural(len(errors), 'error')}" if errors else "")
    out.write(f"\n{counted} in {took:.2f}s\n")
    out.flush()
    if errors:
        return 2
    return 0 if ids else 5


def _color_environ(color: str | None, environ: Any) -> Any:
    """pytest's ``--color``: ``no`` as ``NO_COLOR``, ``yes`` as ``FORCE_COLOR`` (colours on a pipe too)."""
    if color == "no":
        return {**environ, "NO_COLOR": "1"}
    if color == "yes":
        return {key: value for key, value in {**environ, "FORCE_COLOR": "1"}.items() if key != "NO_COLOR"}
    return environ


def _not_ignored(files: list[Any], project: Any, root: Path) -> list[Any]:
    """pytest's ``--ignore PATH`` and ``--ignore-glob PATTERN`` (command line and ``addopts``, relative to
    where rt runs): the files under them are not collected, so the run neither shows nor counts them."""
    if not (project.ignore or project.ignore_globs):
        return files
    import fnmatch

    ignored = [os.path.abspath(root / entry) for entry in project.ignore]
    globs = [os.path.join(root, pattern) for pattern in project.ignore_globs]

    def kept(path: Path) -> bool:
        text = str(path)
        if any(text == entry or text.startswith(entry + os.sep) for entry in ignored):
            return False
        return not any(fnmatch.fnmatch(text, pattern) for pattern in globs)

    return [test_file for test_file in files if kept(test_file.path)]


def agent_mode(environ: Any = os.environ) -> bool:
    """REFERENCE.md: ``AGENT=1`` exactly, or ``CLAUDECODE`` / ``REPL_ID`` set."""
    return environ.get("AGENT") == "1" or bool(environ.get("CLAUDECODE")) or bool(environ.get("REPL_ID"))


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _no_tests_message() -> str:
    return (
        "No tests found!\n\nTest files need names matching "
        + ", ".join(PATTERNS)
        + " or pytest's test_*.py (e.g. math.test.py or test_math.py).\n"
    )


def prepare_sys_path(project: Any, root: Path) -> None:
    """pytest's ``pythonpath`` entries (relative to the rootdir), then the project root, first on sys.path."""
    sys.path[:] = run_sys_path(project, root)


def run_sys_path(project: Any, root: Path) -> list[str]:
    """``sys.path`` as :func:`prepare_sys_path` makes it: the project root (unless there already), pytest's
    ``pythonpath`` entries, then the rest."""
    path = [*(str(project.rootdir / entry) for entry in project.args("pythonpath")), *sys.path]
    if str(root) not in path:
        path.insert(0, str(root))
    return path


def run(args: argparse.Namespace, kernel: Any) -> int:
    from rt import _attrs_codecache
    from rt_testrunner.exiting import freeze_at_exit, relax_collector, restore_collector

    # the runner's attrs classes get their stored methods; given back to attrs before the first test file
    _attrs_codecache.install()

    freeze_at_exit()
    root = Path.cwd()
    command_line = sys.argv
    environ = dict(os.environ)  # as the run starts: a warm server started at its end is started with it
    # from here to the end of the run (and in the zygote forked below) the tests see pytest's command line
    sys.argv = pytest_argv(command_line)
    zygote = None
    if getattr(args, "parallel", None) is not None and not args.watch:
        from rt_testrunner import zygote as zygotes

        if zygotes.available():
            # first thing: its start-up (Python, rt, the runner) overlaps this process's own preparation
            zygote = zygotes.Zygote.start(root)
    relax_collector()  # after the zygote's start: its process collects as it always did
    try:
        return _run(args, kernel, root, zygote, command_line)
    finally:
        restore_collector()  # when the run ended before its first test
        sys.argv = command_line
        _attrs_codecache.uninstall()  # when the run ended before its tests (a usage error, no files)
        if zygote is not None:
            zygote.close()  # the run has ended it already, unless it never reached the workers
        if _warm_wanted(kernel.config, environ):
            _start_warm_server(root, environ)


def _warm_wanted(config: Any, environ: dict[str, str]) -> bool:
    """The warm start is on: ``RT_TEST_WARM=1``, or ``[test] warm = true`` and the variable not 0."""
    from rt import _warm

    if _warm.IN_SERVER or _warm.turned_off(environ):
        return False
    return _warm.turned_on(environ) or bool(config.get("test.warm", False))


def _start_warm_server(root: Path, environ: dict[str, str]) -> None:
    """For the next runs here (rt_testrunner.warm_server): what this run imported before the suite's code
    (pytest and the installed plugins when its pytest session loaded them first) is imported there."""
    from rt_testrunner import pyplugins
    from rt_testrunner.warm_server import spawn

    loaded = pyplugins.LOADED_BEFORE_SUITE
    spawn(root, environ, loaded is not None, sorted(loaded or ()))


def pytest_argv(argv: list[str], command: str = "test") -> list[str]:
    """``sys.argv`` as the tests see it: the program, then the arguments after ``test``, as ``pytest ARGS``
    has them (``rt test -k x`` is ``[rt, "-k", "x"]``). Tests parse it without saying so: ``argparse``'s
    ``parse_args()`` and ``unittest.main()`` read ``sys.argv[1:]``, and ``test`` there is an argument they do
    not know (crcmod's test module runs ``unittest.main()``, which took ``test`` for a test name). Left as it
    is when no ``test`` command is in it (rt's code called with arguments of its own)."""
    if command not in argv[1:]:
        return argv
    return [argv[0], *argv[argv.index(command, 1) + 1 :]]


def _run(args: argparse.Namespace, kernel: Any, root: Path, zygote: Any, command_line: list[str]) -> int:
    try:
        invocation = parse_invocation(args, kernel.config, root, pytest_argv(command_line)[1:])
        _refuse_missing_path(invocation.filters, root, invocation.run.pyconfig)
        files = _not_ignored(
            discover(root, invocation.filters, _patterns(invocation.run.pyconfig, root)),
            invocation.run.pyconfig,
            root,
        )
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.status
    except DiscoveryError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    unknown = _unrecognized(invocation.run.pyconfig, files)
    if unknown is not None:
        print(f"error: {unknown}", file=sys.stderr)
        return EXIT_USAGE
    refused = _requirements_refusal(invocation.run.pyconfig, root)
    if refused is not None:
        from rt_testrunner.exit_status import USAGE_ERROR

        print(f"error: {refused}", file=sys.stderr)
        return USAGE_ERROR
    if args.watch:
        from rt_testrunner.watch import WatchUnavailable, watch

        try:
            return watch(root, invocation.filters, command_line[1:])
        except WatchUnavailable as exc:
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_USAGE
    if invocation.shard is not None:
        if invocation.timings:
            from rt_testrunner import timings as timing_files

            known = timing_files.load(invocation.timings, root)
            files = timing_files.balanced_shard(files, *invocation.shard, known)
        else:
            files = shard(files, *invocation.shard)
    if not files:
        sys.stderr.write(_no_tests_message())
        for fragment in invocation.filters:
            if fragment.endswith(".py") and not fragment.startswith(("./", "../", "/")):
                # it reads as a file name but matched no file as a fragment of one (REFERENCE.md)
                sys.stderr.write(
                    f'note: To treat the "{fragment}" filter as a path, run "rt test ./{fragment}"\n'
                )
        from rt_testrunner.exit_status import exit_status, is_pytest_suite

        return exit_status(
            failed=False,
            tests=0,
            interrupted=False,
            exit_code=None,
            pytest_suite=is_pytest_suite(invocation.run.pyconfig, files),
            pass_with_no_tests=invocation.pass_with_no_tests,
        )
    if invocation.run.seed is not None:
        import random

        random.Random(invocation.run.seed).shuffle(files)
    if invocation.collect_only:
        from rt.backend import resolve_backend

        return _collect_only(invocation, files, resolve_backend(config=kernel.config))
    early = None
    if invocation.parallel is not None and zygote is None:
        # the first worker starts now: its interpreter starts up while this process prepares the reporters
        # (a usage error below ends this process, and the worker ends when its pipe closes)
        from rt_testrunner.pool import launch

        early = launch(root)
    from rt_testrunner.reporter_setup import ReporterSetupError, build_reporters

    try:
        reporters = build_reporters(
            kernel.host.reporters(),
            invocation.reporters,
            invocation.outfiles,
            _color_environ(invocation.color, os.environ),
            sys.stderr,
        )
    except ReporterSetupError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE

    from rt.backend import resolve_backend

    prepare_sys_path(invocation.run.pyconfig, root)
    from rt_testrunner import snapshots
    from rt_testrunner.reporter_setup import ci_detected
    from rt_testrunner.reporters import ReportWriteError

    ci = ci_detected(os.environ)
    if args.update_snapshots and ci:
        print(
            "error: --update-snapshots is refused with CI set: CI runs never write snapshots", file=sys.stderr
        )
        return EXIT_USAGE
    options = invocation.run
    session = snapshots.SnapshotSession(
        root,
        update=args.update_snapshots,
        ci=ci,
        full_run=options.name_pattern is None and not options.only and options.bail is None,
    )
    snapshots.SESSION = session
    coverage = None
    if invocation.coverage is not None:
        from rt_testrunner.coverage_run import CoverageSession, CoverageUnavailable

        try:
            coverage = CoverageSession(
                root,
                invocation.coverage,
                getattr(reporters[0], "stream", None)
                if type(reporters[0]).__name__ == "ProgressReporter"
                else None,
            )
        except CoverageUnavailable as exc:
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_USAGE
        # after the progress line, before the console reporter: the table comes before the summary
        at = 1 if reporters and type(reporters[0]).__name__ == "ProgressReporter" else 0
        reporters.insert(at, coverage)
    if invocation.update_timings:
        from rt_testrunner import timings as timing_files

        # under --shard only this shard's files are written (another shard writes its own file)
        earlier = {} if invocation.shard is not None else timing_files.load(invocation.timings, root)
        reporters.append(timing_files.TimingsWriter(invocation.timings[0], root, earlier))
    backend = resolve_backend(config=kernel.config)
    from rt import _attrs_codecache

    try:
        if invocation.parallel is not None:
            # the workers check and write snapshots; here the session only sums their counts
            from rt_testrunner.pool import Pool

            _attrs_codecache.uninstall()  # rt's classes are created: the suite sees attrs as it is
            finished = Pool(
                invocation,
                files,
                reporters,
                session,
                coverage,
                backend,
                getattr(args, "backend", None),
                early,
                zygote,
            ).run()
        else:
            # only here: --parallel's main process runs no test, and the runner's modules cost it 20 ms
            from rt_testrunner.exiting import freeze_start_up
            from rt_testrunner.runner import Runner

            _attrs_codecache.uninstall()  # rt's classes are created: the suite sees attrs as it is
            freeze_start_up()
            reporters = [session, *reporters]
            runner = Runner(invocation.run, reporters, backend=backend)
            if coverage is not None:
                coverage.start()
            finished = runner.run_sync(files)
    except ReportWriteError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    finally:
        if invocation.parallel is not None:
            session.close()
        for reporter in reporters:
            reporter.close()
    from rt_testrunner.exit_status import exit_status, is_pytest_suite

    failed = bool(finished.failed or finished.errors or (coverage is not None and coverage.failures))
    status = exit_status(
        failed=failed,
        tests=finished.tests,
        interrupted=finished.interrupted,
        exit_code=finished.exit_code,
        pytest_suite=is_pytest_suite(invocation.run.pyconfig, files),
        pass_with_no_tests=invocation.pass_with_no_tests,
    )
    if finished.tests == 0 and not (invocation.pass_with_no_tests or failed or finished.interrupted):
        pattern = invocation.run.name_pattern
        if pattern is not None:
            # the reference's wording, so scripts and people read the same thing from both
            from rt_testrunner.reporters import format_ms, plural

            sys.stderr.write(
                f"\nerror: regex {_quoted(pattern.pattern)} matched 0 tests. Searched "
                f"{plural(len(files), 'file')} (skipping {plural(finished.filtered_out, 'test')}) "
                f"{format_ms(finished.duration)}\n"
            )
        elif finished.filtered_out:
            sys.stderr.write("No tests matched the filters (-t / -k / -m / --only) in the selected files.\n")
        else:
            sys.stderr.write("No tests collected: the selected files define none.\n")
    return status
