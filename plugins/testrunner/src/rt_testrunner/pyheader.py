"""What a suite's ``pytest_report_header`` and ``pytest_report_collectionfinish`` hooks return, printed.

pytest prints the lines these hooks return under its session header (``benchmark: 5.3.1 (defaults: ...)``,
a project's versions of its dependencies) and after its ``collected N items`` line. rt prints no header of its
own, but the lines are the suite's: once the run is collected, before the first test, rt prints those of the
suite's conftest.py files and plugin modules (``pytest_plugins``, ``-p``; not installed plugins', whose
lines, such as pytest-benchmark's settings, would join every run's output) on stdout in pytest's order (the
hooks' answers last registered first, reversed, as pytest writes them), each hook's when its hooks return
(after what they print), the header's unless ``-q`` or ``--no-header``. Under ``--parallel`` the process that collects for every worker
prints them (the zygote), or the first worker, never each worker.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rt_testrunner import capture, pyplugins

if TYPE_CHECKING:
    from rt_testrunner.pysession import PytestSession


def print_report_lines(session: PytestSession) -> None:
    """Call the header and collection-finish hooks of the suite's conftest.py files and plugin modules and
    print their lines."""
    if os.environ.get("RT_TEST_WORKER", "1") != "1":
        return  # another --parallel worker prints them
    config = session.config
    available: dict[str, Any] = {"config": config, "start_path": Path.cwd()}
    option = config.option
    # each hook's lines are written when its hooks return, as pytest's: what the collection-finish hooks
    # print comes after the header's lines, not before them
    if getattr(option, "verbose", 0) >= 0 and not getattr(option, "no_header", False):
        _write(_answers(session, "pytest_report_header", available))
    available["items"] = list(getattr(session, "items", ()))
    _write(_answers(session, "pytest_report_collectionfinish", available))


def _write(lines: list[str]) -> None:
    if lines:
        terminal = capture.terminal_stream("out")
        terminal.write("".join(f"{line}\n" for line in lines))
        terminal.flush()


def _answers(session: PytestSession, name: str, available: dict[str, Any]) -> list[str]:
    """The lines hook ``name`` returns, in the order pytest writes them; a hook that raises is one line."""
    answers: list[Any] = []
    # the suite's own hooks only: installed plugins' are not kept (pysession.py)
    for hook in pyplugins.ordered([hook for _, hook in session.named_hooks.get(name, ())]):
        try:
            answers.extend(pyplugins.call(name, [hook], available))
        except Exception as exc:  # noqa: BLE001 - one line, as a plugin hook's failure is
            print(f"rt test: {pyplugins.describe_error(hook, name, exc)}", file=sys.stderr)
    lines: list[str] = []
    for answer in reversed(answers):
        lines.extend([answer] if isinstance(answer, str) else [str(line) for line in answer])
    return lines
