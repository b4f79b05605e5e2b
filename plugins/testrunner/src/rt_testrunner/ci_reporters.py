"""The JUnit XML reporter (``--reporter=junit --reporter-outfile PATH``) and GitHub Actions annotations.

Like the console reporter they only consume :mod:`rt.events` events. The JUnit file is written once, when
the run finishes (spec C rule 7); the GitHub reporter switches itself on when ``GITHUB_ACTIONS=true`` (spec C
rule 6; its rule is in :mod:`rt_testrunner.plugin`), after whichever reporter prints to the console.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import sys
from pathlib import Path
from typing import TextIO
from xml.sax.saxutils import escape, quoteattr

import attrs
from rt.events import FileFinished, FileStarted, RunFinished, TestEvent, TestFinished, TestStatus
from rt.interfaces import ReporterOptions

from rt_testrunner.reporters import ReportWriteError

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
#: characters XML 1.0 cannot carry at all, even escaped (test output may contain any of them)
_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


# --- JUnit ------------------------------------------------------------------------------------------------


def _attr(value: object) -> str:
    return quoteattr(_XML_INVALID.sub("\ufffd", strip_ansi(str(value))))


def _text(value: str) -> str:
    return escape(_XML_INVALID.sub("\ufffd", strip_ansi(value)))


def _seconds(value: float) -> str:
    return f"{value:.6f}"


@attrs.define
class _Suite:
    """A ``<testsuite>``: a file, or a describe inside one. Counts include nested suites."""

    name: str
    cases: list[TestFinished] = attrs.Factory(list)
    children: dict[str, _Suite] = attrs.Factory(dict)
    load_error: str | None = None

    def all_cases(self) -> list[TestFinished]:
        found = list(self.cases)
        for child in self.children.values():
            found.extend(child.all_cases())
        return found


class JUnitReporter:
    """``<testsuites>`` / a ``<testsuite>`` per file (nested per describe) / ``<testcase>`` per test."""

    def __init__(self, options: ReporterOptions) -> None:
        if not options.outfile:
            raise ValueError("the junit reporter needs --reporter-outfile <path>")
        self.outfile = Path(options.outfile)
        self.files: dict[str, _Suite] = {}
        self.durations: dict[str, float] = {}
        self.hostname = socket.gethostname()

    def handle(self, event: TestEvent) -> None:
        if isinstance(event, FileStarted):
            self.files.setdefault(event.file, _Suite(event.file))
        elif isinstance(event, TestFinished):
            suite = self.files.setdefault(event.file, _Suite(event.file))
            for describe in event.path[:-1]:
                suite = suite.children.setdefault(describe, _Suite(describe))
            suite.cases.append(event)
        elif isinstance(event, FileFinished):
            suite = self.files.setdefault(event.file, _Suite(event.file))
            self.durations[event.file] = event.duration
            if event.error is not None:
                suite.load_error = event.error.details or event.error.message
        elif isinstance(event, RunFinished):
            self.write(event)

    def render(self, event: RunFinished) -> str:
        cases = [case for suite in self.files.values() for case in suite.all_cases()]
        load_errors = sum(1 for suite in self.files.values() if suite.load_error is not None)
        lines = ['<?xml version="1.0" encoding="UTF-8"?>',
                 (f'<testsuites name="rt test" tests="{len(cases) + load_errors}" '
                  f'assertions="{sum(c.expect_calls for c in cases)}" failures="{event.failed + load_errors}" '
                  f'errors="{event.errors - load_errors}" skipped="{event.skipped + event.todo + event.xfailed}" '
                  f'time="{_seconds(event.duration)}">')]
        for file, suite in self.files.items():
            self._suite(lines, suite, file, 1, self.durations.get(file, 0.0), top=True)
        lines.append("</testsuites>")
        return "\n".join(lines) + "\n"

    def _suite(self, lines: list[str], suite: _Suite, file: str, depth: int, duration: float, top: bool) -> None:
        cases = suite.all_cases()
        broken = suite.load_error is not None
        failures = sum(1 for c in cases if c.status is TestStatus.FAIL) + broken
        skipped = sum(1 for c in cases if c.status in (TestStatus.SKIP, TestStatus.TODO, TestStatus.XFAIL))
        errors = sum(1 for c in cases if c.status is TestStatus.ERROR)
        pad = "  " * depth
        extra = f" file={_attr(file)} hostname={_attr(self.hostname)}" if top else ""
        time = duration if top else sum(c.duration for c in cases)
        lines.append(f"{pad}<testsuite name={_attr(suite.name)}{extra} tests=\"{len(cases) + broken}\" "
                     f"assertions=\"{sum(c.expect_calls for c in cases)}\" failures=\"{failures}\" "
                     f"errors=\"{errors}\" skipped=\"{skipped}\" time=\"{_seconds(time)}\">")
        if suite.load_error is not None:
            first_line = suite.load_error.splitlines()[0] if suite.load_error else ""
            lines.append(f"{pad}  <testcase name=\"(file failed to load)\" classname={_attr(file)} time=\"0\" "
                         f"file={_attr(file)} assertions=\"0\">")
            lines.append(f"{pad}    <failure type=\"LoadError\" message={_attr(first_line)}>"
                         f"{_text(suite.load_error)}</failure>")
            lines.append(f"{pad}  </testcase>")
        for case in suite.cases:
            self._case(lines, case, depth + 1)
        for child in suite.children.values():
            self._suite(lines, child, file, depth + 1, 0.0, top=False)
        lines.append(f"{pad}</testsuite>")

    def _case(self, lines: list[str], case: TestFinished, depth: int) -> None:
        pad = "  " * depth
        classname = " > ".join(case.path[:-1]) or case.file
        line = case.location.line if case.location is not None else 0
        opening = (f"{pad}<testcase name={_attr(case.path[-1])} classname={_attr(classname)} "
                   f"time=\"{_seconds(case.duration)}\" file={_attr(case.file)} line=\"{line}\" "
                   f"assertions=\"{case.expect_calls}\"")
        if case.status in (TestStatus.PASS, TestStatus.XPASS) and not case.output:
            lines.append(opening + " />")
            return
        lines.append(opening + ">")
        if case.status in (TestStatus.PASS, TestStatus.XPASS):
            pass
        elif case.status is TestStatus.SKIP:
            lines.append(f"{pad}  <skipped message={_attr(case.reason)} />" if case.reason else f"{pad}  <skipped />")
        elif case.status is TestStatus.XFAIL:
            lines.append(f"{pad}  <skipped type=\"pytest.xfail\" message={_attr(case.reason)} />")
        elif case.status is TestStatus.TODO:
            lines.append(f'{pad}  <skipped message="TODO" />')
        else:
            failure = case.failure
            kind = failure.kind if failure is not None else "Error"
            message = failure.message if failure is not None else ""
            details = (failure.details or failure.message) if failure is not None else ""
            tag = "error" if case.status is TestStatus.ERROR else "failure"
            lines.append(f"{pad}  <{tag} type={_attr(kind)} message={_attr(message)}>"
                         f"{_text(details)}</{tag}>")
        if case.output:
            lines.append(f"{pad}  <system-out>{_text(case.output)}</system-out>")
        lines.append(f"{pad}</testcase>")

    def write(self, event: RunFinished) -> None:
        """Write the whole report at once (through a temporary file, so a reader never sees half of it)."""
        partial = self.outfile.with_name(f".{self.outfile.name}.{os.getpid()}.tmp")
        try:
            self.outfile.parent.mkdir(parents=True, exist_ok=True)
            partial.write_text(self.render(event), encoding="utf-8")
            os.replace(partial, self.outfile)
        except OSError as exc:
            raise ReportWriteError(f"cannot write the JUnit report to {str(self.outfile)!r}: "
                                   f"{exc.strerror or exc}") from None
        finally:
            with contextlib.suppress(OSError):
                partial.unlink(missing_ok=True)

    def close(self) -> None:
        pass


# --- GitHub Actions -------------------------------------------------------------------------------------


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
        elif isinstance(event, TestFinished) and event.status is TestStatus.FAIL:
            failure = event.failure
            where = (failure.location if failure is not None else None) or event.location
            message = strip_ansi((failure.details or failure.message) if failure is not None else "failed")
            self._error(where.file if where else event.file, where.line if where else 0,
                        where.column if where else 0, event.name, message)
        elif isinstance(event, FileFinished):
            if event.error is not None:
                where = event.error.location
                self._error(where.file if where else event.file, where.line if where else 0,
                            where.column if where else 0, f"{event.file} failed to load",
                            strip_ansi(event.error.details or event.error.message))
            if self.groups:
                self.stream.write("::endgroup::\n")
            self.stream.flush()

    def _error(self, file: str, line: int, column: int, title: str, message: str) -> None:
        self.stream.write(f"::error file={_escape_property(file)},line={line},col={column},"
                          f"title={_escape_property(title)}::{_escape_data(message)}\n")

    def close(self) -> None:
        self.stream.flush()
