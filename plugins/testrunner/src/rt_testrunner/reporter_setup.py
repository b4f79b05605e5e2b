"""Which reporters run: every registered one (built-ins included) whose rule switches it on.

Nothing here knows a reporter by name except as data: the built-ins register through
``rt_register_reporters`` like any plugin's reporter, each with an ``enabled(ReporterContext)`` rule (see
:mod:`rt_testrunner.plugin`). A factory without a rule runs only when named with ``--reporter NAME``.
``--reporter`` takes a comma-separated list (and may be repeated), so several reporters run at once;
``--reporter-outfile`` values go, in order, to the named reporters that write files.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any, TextIO

from rt.interfaces import Reporter, ReporterContext, ReporterOptions

#: reporters that write to the terminal (stderr) and never take an outfile
TERMINAL_REPORTERS = frozenset({"console", "agent", "dots", "github", "progress"})
#: variables a CI service sets, for when ``CI`` itself is missing
_CI_VARIABLES = (
    "GITHUB_ACTIONS",
    "GITLAB_CI",
    "BUILDKITE",
    "CIRCLECI",
    "TRAVIS",
    "JENKINS_URL",
    "TF_BUILD",
    "TEAMCITY_VERSION",
    "BITBUCKET_BUILD_NUMBER",
    "BUILD_NUMBER",
)


class ReporterSetupError(Exception):
    """A bad ``--reporter`` / ``--reporter-outfile`` combination: a usage error."""


def agent_mode(environ: Mapping[str, str] = os.environ) -> bool:
    """REFERENCE.md: ``AGENT=1`` exactly, or ``CLAUDECODE`` / ``REPL_ID`` set."""
    return environ.get("AGENT") == "1" or bool(environ.get("CLAUDECODE")) or bool(environ.get("REPL_ID"))


def ci_detected(environ: Mapping[str, str] = os.environ) -> bool:
    """``CI=true`` (or ``1``), or a CI service's own variable; ``CI=false``/``0`` says no."""
    value = environ.get("CI", "").strip().lower()
    if value in ("true", "1", "yes"):
        return True
    if value in ("false", "0", "no"):
        return False
    return any(environ.get(name) for name in _CI_VARIABLES)


def parse_names(values: Iterable[str] | None, dots: bool = False) -> tuple[str, ...]:
    """``--reporter a,b --reporter c`` and ``--dots``: the names in order, each once."""
    names: list[str] = []
    for value in values or ():
        for name in value.split(","):
            name = name.strip()
            if not name:
                raise ReporterSetupError(f"Invalid --reporter value {value!r}: empty reporter name")
            if name not in names:
                names.append(name)
    if dots and "dots" not in names:
        names.append("dots")
    return tuple(names)


def context_for(names: Iterable[str], environ: Mapping[str, str], stderr: TextIO) -> ReporterContext:
    return ReporterContext(
        selected=frozenset(names),
        environ=environ,
        agent=agent_mode(environ),
        ci=ci_detected(environ),
        tty=_isatty(stderr),
    )


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def is_enabled(name: str, factory: Any, context: ReporterContext) -> bool:
    rule = getattr(factory, "enabled", None)
    if callable(rule):
        return bool(rule(context))
    return name in context.selected


def build_reporters(
    factories: Mapping[str, Any],
    names: tuple[str, ...],
    outfiles: tuple[str, ...],
    environ: Mapping[str, str],
    stderr: TextIO,
) -> list[Reporter]:
    """Instantiate the reporters that are on, in registration order (the progress line first, so every other
    terminal reporter writes through it). ``factories`` maps names to ``Registered`` entries (``.value``)."""
    unknown = [name for name in names if name not in factories]
    if unknown:
        raise ReporterSetupError(
            f"unknown reporter {unknown[0]!r} (installed: {', '.join(sorted(factories))})"
        )
    file_reporters = [name for name in names if name not in TERMINAL_REPORTERS]
    if len(outfiles) > len(file_reporters):
        raise ReporterSetupError(
            f"--reporter-outfile {outfiles[len(file_reporters)]!r} needs a --reporter <name> that writes a file "
            "(e.g. --reporter=junit): the console output is not written to a file"
        )
    outfile_of = dict(zip(file_reporters, outfiles, strict=False))
    context = context_for(names, environ, stderr)
    colors = (context.tty or bool(environ.get("FORCE_COLOR"))) and not environ.get("NO_COLOR")
    chosen = [name for name, registered in factories.items() if is_enabled(name, registered.value, context)]
    chosen.sort(key=lambda name: name != "progress")
    reporters: list[Reporter] = []
    terminal: Any = None
    for name in chosen:
        stream = terminal if name in TERMINAL_REPORTERS else None
        options = ReporterOptions(
            outfile=outfile_of.get(name), colors=colors, agent=context.agent, stream=stream, context=context
        )
        try:
            reporter = factories[name].value(options)
        except ValueError as exc:  # a factory's own check of its options (junit without an outfile ...)
            raise ReporterSetupError(f"reporter {name!r}: {exc}") from None
        if name == "progress":
            terminal = reporter.stream
        reporters.append(reporter)
    return reporters
