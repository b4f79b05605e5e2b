"""Hook implementations of rt-testrunner: the entry point `testrunner` in group `rt` names this module.

Keep imports here light: the kernel imports this module when the first `rt.` name is used, and `rt test`
start-up time is a measured target. Everything heavy is imported inside the callables registered below.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from rt.hookspecs import hookimpl
from rt.interfaces import Command, ConfigOption, NamespaceEntry, ReporterContext, ReporterOptions

TEST_NAMES = (
    "test",
    "it",
    "describe",
    "expect",
    "mock",
    "spy_on",
    "before_all",
    "before_each",
    "after_each",
    "after_all",
)


@hookimpl
def rt_register_namespace(register: Callable[[NamespaceEntry], None]) -> None:
    for name in TEST_NAMES:
        register(NamespaceEntry.lazy(name, f"rt_testrunner.api:{name}", module="rt.test"))


@hookimpl
def rt_register_commands(register: Callable[[Command], None]) -> None:
    register(
        Command.lazy(
            "test",
            "run the tests in *.test.py, *_test.py, *.spec.py and *_spec.py files",
            "rt_testrunner.command:configure",
            "rt_testrunner.command:run",
            extra_options=True,  # the options pytest plugins and conftest.py files register (--runslow)
        )
    )


@hookimpl
def rt_register_config_options(register: Callable[[ConfigOption], None]) -> None:
    register(ConfigOption("test", "retry", int, 0, help="retry failed tests up to N times (--retry)"))
    register(ConfigOption("test", "timeout", int, 5000, help="per-test time-out in milliseconds (--timeout)"))
    register(ConfigOption("test", "preload", list, (), help="scripts loaded before the tests (--preload)"))
    register(ConfigOption("test", "concurrent", bool, False, help="run tests concurrently (--concurrent)"))
    register(ConfigOption("test", "max_concurrency", int, 20, help="most tests at once (--max-concurrency)"))
    register(ConfigOption("test", "randomize", bool, False, help="random test order (--randomize)"))
    register(ConfigOption("test", "todo", bool, False, help="run tests marked todo (--todo)"))
    register(
        ConfigOption(
            "test", "warm", bool, False, help="fork each run from a per-project warm server (RT_TEST_WARM)"
        )
    )
    register(ConfigOption("test", "coverage", bool, False, help="measure coverage (--coverage)"))
    register(
        ConfigOption(
            "test", "coverage_reporter", list, ("text",), help="text and/or lcov (--coverage-reporter)"
        )
    )
    register(
        ConfigOption("test", "coverage_dir", str, "coverage", help="where lcov.info goes (--coverage-dir)")
    )
    register(ConfigOption("test", "coverage_branch", bool, False, help="branch coverage (--coverage-branch)"))
    register(
        ConfigOption(
            "test",
            "coverage_threshold",
            float,
            None,
            help="fail the run below this fraction of lines/functions covered (e.g. 0.9)",
        )
    )


# eq=False: never compared, so no __eq__/__hash__ to compile (0.7 M instructions less at import)
@attrs.frozen(eq=False)
class BuiltinReporter:
    """A built-in reporter's factory: the class is imported only when the reporter runs, and ``enabled`` is
    its rule for switching itself on (the same contract a third-party factory may follow)."""

    target: str  # "module:Class", called with the ReporterOptions
    rule: Callable[[ReporterContext], bool]

    def __call__(self, options: ReporterOptions) -> Any:
        from rt.interfaces import import_target

        return import_target(self.target)(options)

    def enabled(self, context: ReporterContext) -> bool:
        return self.rule(context)


def _console_on(ctx: ReporterContext) -> bool:
    # the default output; --dots replaces it, and so does agent mode (the agent reporter)
    return "console" in ctx.selected or not (ctx.agent or ctx.selected & {"dots", "agent"})


def _agent_on(ctx: ReporterContext) -> bool:
    return "agent" in ctx.selected or (ctx.agent and not ctx.selected & {"dots", "console"})


def _github_on(ctx: ReporterContext) -> bool:
    # spec C rule 6: annotations without configuration on GitHub Actions; never in agent mode
    return "github" in ctx.selected or (ctx.environ.get("GITHUB_ACTIONS") == "true" and not ctx.agent)


def _progress_on(ctx: ReporterContext) -> bool:
    # a status line only for a person watching a terminal: never for agents, CI logs or pipes
    return "progress" in ctx.selected or (
        ctx.tty and not ctx.agent and not ctx.ci and "dots" not in ctx.selected
    )


BUILTIN_REPORTERS = {
    "progress": BuiltinReporter("rt_testrunner.progress:ProgressReporter", _progress_on),
    "console": BuiltinReporter("rt_testrunner.reporters:ConsoleReporter", _console_on),
    "agent": BuiltinReporter("rt_testrunner.reporters:AgentReporter", _agent_on),
    "dots": BuiltinReporter("rt_testrunner.reporters:DotsReporter", lambda ctx: "dots" in ctx.selected),
    "junit": BuiltinReporter("rt_testrunner.junit:JUnitReporter", lambda ctx: "junit" in ctx.selected),
    "github": BuiltinReporter("rt_testrunner.ci_reporters:GitHubReporter", _github_on),
}


@hookimpl
def rt_register_reporters(register: Callable[[str, Any], None]) -> None:
    for name, factory in BUILTIN_REPORTERS.items():
        register(name, factory)
