"""Hook implementations of rt-testrunner: the entry point `testrunner` in group `rt` names this module.

Keep imports here light: the kernel imports this module when the first `rt.` name is used, and `rt test`
start-up time is a measured target. Everything heavy is imported inside the callables registered below.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rt.hookspecs import hookimpl
from rt.interfaces import Command, ConfigOption, NamespaceEntry

TEST_NAMES = (
    "test", "it", "describe", "expect", "mock", "spy_on",
    "before_all", "before_each", "after_each", "after_all",
)


@hookimpl
def rt_register_namespace(register: Callable[[NamespaceEntry], None]) -> None:
    for name in TEST_NAMES:
        register(NamespaceEntry.lazy(name, f"rt_testrunner.api:{name}", module="rt.test"))


@hookimpl
def rt_register_commands(register: Callable[[Command], None]) -> None:
    register(Command.lazy("test", "run the tests in *.test.py, *_test.py, *.spec.py and *_spec.py files",
                          "rt_testrunner.command:configure", "rt_testrunner.command:run"))


@hookimpl
def rt_register_config_options(register: Callable[[ConfigOption], None]) -> None:
    register(ConfigOption("test", "retry", int, 0, help="retry failed tests up to N times (--retry)"))
    register(ConfigOption("test", "timeout", int, 5000, help="per-test time-out in milliseconds (--timeout)"))
    register(ConfigOption("test", "preload", list, (), help="scripts loaded before the tests (--preload)"))
    register(ConfigOption("test", "concurrent", bool, False, help="run tests concurrently (--concurrent)"))
    register(ConfigOption("test", "max_concurrency", int, 20, help="most tests at once (--max-concurrency)"))
    register(ConfigOption("test", "randomize", bool, False, help="random test order (--randomize)"))
    register(ConfigOption("test", "todo", bool, False, help="run tests marked todo (--todo)"))
    register(ConfigOption("test", "coverage", bool, False, help="coverage profile (--coverage; next release)"))


def _console_reporter(options: Any) -> Any:
    from rt_testrunner.reporters import ConsoleReporter

    return ConsoleReporter(options)


def _dots_reporter(options: Any) -> Any:
    from rt_testrunner.reporters import DotsReporter

    return DotsReporter(options)


def _junit_reporter(options: Any) -> Any:
    from rt_testrunner.ci_reporters import JUnitReporter

    return JUnitReporter(options)


def _github_reporter(options: Any) -> Any:
    from rt_testrunner.ci_reporters import GitHubReporter

    return GitHubReporter(options)


@hookimpl
def rt_register_reporters(register: Callable[[str, Any], None]) -> None:
    register("console", _console_reporter)
    register("dots", _dots_reporter)
    register("junit", _junit_reporter)
    register("github", _github_reporter)
