"""GitHub Actions annotations: ``::group::``/``::endgroup::`` around each file, ``::error`` per failure.

Like the console reporter it only consumes :mod:`rt.events` events. It switches itself on when
``GITHUB_ACTIONS=true`` (spec C rule 6; its rule is in :mod:`rt_testrunner.plugin`) and runs after whichever
reporter prints to the console. (The JUnit reporter is :mod:`rt_testrunner.junit`.)
"""

from __future__ import annotations

import os
import re
import sys
from typing import TextIO

from rt.events import FileFinished, FileStarted, TestEvent, TestFinished, TestStatus
from rt.interfaces import ReporterOptions

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_actions(environ: object = os.environ) -> bool:
    """REFERENCE.md: annotations when ``GITHUB_ACTIONS=true``."""
    return getattr(environ, "get", lambda _k: None)("GITHUB_ACTIONS") == "true"


class GitHubReporter:
    """``::group::file`` / ``::endgroup::`` around each file and an ``::error`` line per failure.

    It writes to the console reporter's stream (stderr), after it in the reporter list, so the group lines
    bracket that file's output. ``groups=False`` (with ``--dots``, whose dots share one line across files)
    keeps only the ``::error`` lines: a workflow command is only recognised at the start of a line."""

    def __init__(self, options: ReporterOptions, groups: bool | None = None) -> None:
        self.stream: TextIO = options.stream or sys.stderr
        if groups is None:
            groups = options.context is None or "dots" not in options.context.selected
        self.groups = groups

    def handle(self, event: TestEvent) -> None:
        if isinstance(event, FileStarted):
            if self.groups:
                self.stream.write(f"::group::{_escape_data(event.file)}\n")
        elif isinstance(event, TestFinished) and event.status in (TestStatus.FAIL, TestStatus.ERROR):
            failure = event.failure
            where = (failure.location if failure is not None else None) or event.location
            message = strip_ansi((failure.details or failure.message) if failure is not None else "failed")
            self._error(
                where.file if where else event.file,
                where.line if where else 0,
                where.column if where else 0,
                event.name,
                message,
            )
        elif isinstance(event, FileFinished):
            if event.error is not None:
                where = event.error.location
                self._error(
                    where.file if where else event.file,
                    where.line if where else 0,
                    where.column if where else 0,
                    f"{event.file} failed to load",
                    strip_ansi(event.error.details or event.error.message),
                )
            if self.groups:
                self.stream.write("::endgroup::\n")
            self.stream.flush()

    def _error(self, file: str, line: int, column: int, title: str, message: str) -> None:
        self.stream.write(
            f"::error file={_escape_property(file)},line={line},col={column},"
            f"title={_escape_property(title)}::{_escape_data(message)}\n"
        )

    def close(self) -> None:
        self.stream.flush()
