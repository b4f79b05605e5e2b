"""The JUnit XML reporter: ``rt test --reporter=junit --reporter-outfile PATH`` (REFERENCE.md "JUnit").

``<testsuites>`` holds a ``<testsuite>`` per file; each ``describe`` is a ``<testsuite>`` nested where it is
declared, so the file reads in source order whatever order the tests ran in (``--randomize``, concurrency).
Every suite carries ``file``, ``line`` (a describe's: where it is declared) and ``hostname``; every ``<testcase>`` its ``file``, ``line`` and
``assertions``. A retried test appears once, with its last result. pytest's outcomes map the way pytest's own
junitxml does: a set-up error is ``<error>``, an expected failure a ``<skipped type="pytest.xfail">``, an
unexpected pass (non-strict) a pass; a file that failed to load is an ``<error>`` (it is not a test).
Captured output goes to ``<system-out>``. The file is written once, at the end, through a temporary file.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
from collections.abc import Sequence
from pathlib import Path

import attrs

from rt.events import (
    FileFinished,
    FileStarted,
    RunFinished,
    TestEvent,
    TestFailure,
    TestFinished,
    TestStatus,
)
from rt.interfaces import ReporterOptions
from rt_testrunner.reporters import ReportWriteError

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
#: characters XML 1.0 cannot carry at all, even escaped (test output may contain any of them)
_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_SKIPPED = ("skip", "todo", "xfail")
#: the name rt gives a pytest test's failed teardown, reported next to the test's own result
_TEARDOWN = " [teardown]"
#: the kinds of failure whose text rt writes without the exception's type name (see :func:`crash_message`)
_BARE_KINDS = ("AssertionError", "Failed")
#: the kinds of failure pytest reports as a text, not as an exception: its ``<failure>``'s message and text are
#: that text alone, without the type's name (a test its subtests failed: ``contains 1 failed subtest``)
_TEXT_KINDS = ("SubtestsFailed",)
#: how rt begins the details of a pytest test's error while set up, and of a node's collection error
_AT_SETUP = "error at setup: "
_AT_COLLECTION = "error at collection: "


def _clean(value: object) -> str:
    return _XML_INVALID.sub("\ufffd", _ANSI.sub("", str(value)))


def _attr(value: object) -> str:
    text = (
        _clean(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    )
    return '"' + text.replace("\n", "&#10;").replace("\r", "&#13;").replace("\t", "&#9;") + '"'


def _text(value: str) -> str:
    return _clean(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _seconds(value: float) -> str:
    return f"{value:.6f}"


def whole_message(failure: TestFailure) -> str:
    """The failure's whole message: every line of it (a diff, a multi-line exception text), without the
    traceback lines that follow it in ``details``. A failure whose details do not begin with its message (a
    failed report a hook changed, whose details are the report's text) has its message apart: the report's
    crash line, as pytest's junitxml writes ``reprcrash.message`` rather than the report's whole text."""
    if _crash_apart(failure):
        return failure.message
    details = failure.details or failure.message
    lines: list[str] = []
    for line in details.splitlines():
        if line.startswith(("    at ", "      at ")):
            break
        lines.append(line)
    return "\n".join(lines).rstrip() or failure.message


def _crash_apart(failure: TestFailure) -> bool:
    """Whether the failure's message is a changed report's crash line, apart from its details."""
    details = failure.details or failure.message
    head = failure.message.splitlines()[0] if failure.message else ""
    return bool(head) and head not in details.splitlines()[0]


def crash_message(failure: TestFailure) -> str:
    """pytest's ``reprcrash.message`` of a failure: the exception's type name and its text. rt writes the text
    of an ``AssertionError`` and of ``pytest.fail`` (kind ``Failed``) without the type's name, which pytest's
    junitxml keeps, but for an assert's own explanation: pytest strips ``AssertionError: `` when the
    exception's repr begins ``AssertionError('assert `` (a text in single quotes), so ``assert 'a' == 'b'``
    keeps it and ``assert x == 1`` does not."""
    message = whole_message(failure)
    kind = failure.kind
    if kind not in _BARE_KINDS or _crash_apart(failure) or message == kind or message.startswith(f"{kind}: "):
        return message
    if kind == "AssertionError" and repr(message).startswith("'assert "):
        return message
    return f"{kind}: {message}"


def _error_message(failure: TestFailure, teardown: bool) -> str:
    """The ``message`` of an ``<error>``, as pytest's junitxml words it: ``failed on setup with "<crash>"``
    (``teardown`` for a failed teardown), ``collection failure`` for a node that failed to collect."""
    details = failure.details or failure.message
    if details.startswith(_AT_COLLECTION):
        return "collection failure"
    if details.startswith(_AT_SETUP):
        failure = attrs.evolve(failure, details=details.removeprefix(_AT_SETUP))
    return f'failed on {"teardown" if teardown else "setup"} with "{crash_message(failure)}"'


@attrs.define
class _Suite:
    """A ``<testsuite>``: a file, or a describe inside one."""

    name: str
    file: str
    children: dict[str, _Suite] = attrs.Factory(dict)
    cases: list[TestFinished] = attrs.Factory(list)
    load_error: TestFailure | None = None
    duration: float | None = None  # a file's own duration; describes add up their tests
    declared: int = 0  # the describe's own line (0: unknown, e.g. a pytest class)
    #: the results of a test's subtests that did not pass, by the test's (path, run): elements of its own
    #: ``<testcase>``, as pytest 9's junitxml writes them
    subresults: dict[tuple[tuple[str, ...], int], list[TestFinished]] = attrs.Factory(dict)
    #: the ids of the results that are a test's failed teardown (their name without rt's ``[teardown]``)
    teardowns: set[int] = attrs.Factory(set)

    def all_subresults(self) -> list[TestFinished]:
        found = [result for results in self.subresults.values() for result in results]
        for child in self.children.values():
            found.extend(child.all_subresults())
        return found

    def all_cases(self) -> list[TestFinished]:
        found = list(self.cases)
        for child in self.children.values():
            found.extend(child.all_cases())
        return found

    @property
    def line(self) -> int:
        """Where the describe is declared; else the line of its first test."""
        if self.declared:
            return self.declared
        lines = [c.location.line for c in self.all_cases() if c.location is not None and c.location.line]
        return min(lines, default=0)

    def ordered(self) -> list[TestFinished | _Suite]:
        """Tests and describes in source order (by line; the order they were seen breaks ties)."""
        entries: list[TestFinished | _Suite] = [*self.cases, *self.children.values()]

        def line(entry: TestFinished | _Suite) -> int:
            if isinstance(entry, _Suite):
                return entry.line
            return entry.location.line if entry.location is not None else 0

        return sorted(entries, key=line)


def _add_case(suite: _Suite, event: TestFinished) -> None:
    """Add ``event`` to its suite's cases. A failed teardown goes where pytest's junitxml puts it: under the
    test's own name, in place of the test's pass (one ``<testcase>`` with ``<error>``), or next to its
    failure (two ``<testcase>`` of that name), so the report's ``tests`` count is pytest's. A subtest's
    result is an element of its test's ``<testcase>`` (pytest 9's: a ``<failure>`` per failed subtest)."""
    cases = suite.cases
    if event.subtest_of:
        parent = (*event.path[:-1], event.subtest_of)
        if any(case.path == parent and case.run == event.run for case in cases):
            suite.subresults.setdefault((parent, event.run), []).append(event)
            return
    if event.status is TestStatus.ERROR and event.path[-1].endswith(_TEARDOWN):
        event = attrs.evolve(event, path=(*event.path[:-1], event.path[-1].removesuffix(_TEARDOWN)))
        for index in range(len(cases) - 1, -1, -1):
            case = cases[index]
            if case.path == event.path and case.run == event.run:
                if case.status is TestStatus.PASS:
                    event = attrs.evolve(event, duration=case.duration, output=case.output)
                    suite.teardowns.add(id(event))
                    cases[index] = event
                    return
                break
        suite.teardowns.add(id(event))
    cases.append(event)


def _status(case: TestFinished) -> str:
    return str(case.status.value)


def _outcome_element(case: TestFinished, teardown: bool = False) -> str | None:
    """The ``<skipped>``, ``<failure>`` or ``<error>`` element of a result, as pytest's junitxml writes it
    (a skip with a reason: ``type="pytest.skip"``, the reason as its message, and ``file:line: reason`` as
    its text);
    None for a pass."""
    status = _status(case)
    reason: str = getattr(case, "reason", "")
    if status == "skip" and not reason:
        return "<skipped />"  # the spec's test.skip (the reference runtime's element): no reason to give
    if status == "skip":
        line = case.location.line if case.location is not None else 0
        where = f"{case.file}:{line}: " if line else ""
        return f'<skipped type="pytest.skip" message={_attr(reason)}>{_text(where + reason)}</skipped>'
    if status == "todo":
        return '<skipped message="TODO" />'
    if status == "xfail":
        return f'<skipped type="pytest.xfail" message={_attr(reason or "expected failure")} />'
    if status in ("fail", "error"):
        tag = "error" if status == "error" else "failure"
        failure = case.failure
        kind = failure.kind if failure is not None else "Error"
        message = ""
        if failure is not None:
            if case.own_style:  # rt's own tests keep rt's message: the assert's text, no type name added
                message = whole_message(failure)
            elif status == "error":
                message = _error_message(failure, teardown)
            else:
                message = crash_message(failure)
        details = (failure.details or failure.message) if failure is not None else ""
        if kind in _TEXT_KINDS:
            message = details = message.removeprefix(f"{kind}: ")
        if case.attempt > 1:
            details += f"\n(attempt {case.attempt}: the last of {case.attempt} attempts)"
        return f"<{tag} type={_attr(kind)} message={_attr(message)}>{_text(details)}</{tag}>"
    return None


class JUnitReporter:
    def __init__(self, options: ReporterOptions) -> None:
        if not options.outfile:
            raise ValueError("the junit reporter needs --reporter-outfile <path>")
        self.outfile = Path(options.outfile)
        self.files: dict[str, _Suite] = {}
        self.hostname = socket.gethostname()

    def handle(self, event: TestEvent) -> None:
        if isinstance(event, FileStarted):
            self.files.setdefault(event.file, _Suite(event.file, event.file))
        elif isinstance(event, TestFinished):
            suite = self.files.setdefault(event.file, _Suite(event.file, event.file))
            lines = event.suite_lines or (0,) * (len(event.path) - 1)
            for describe, line in zip(event.path[:-1], lines, strict=False):
                suite = suite.children.setdefault(describe, _Suite(describe, event.file, declared=line))
            _add_case(suite, event)
        elif isinstance(event, FileFinished):
            suite = self.files.setdefault(event.file, _Suite(event.file, event.file))
            # a file the session's order runs in several turns (session_order.py) adds their durations up
            suite.duration = (suite.duration or 0.0) + event.duration
            suite.load_error = event.error
        elif isinstance(event, RunFinished):
            self.write(event)

    # -- rendering -------------------------------------------------------------------------------------------

    def render(self, event: RunFinished) -> str:
        counts = _Counts.of(list(self.files.values()))
        lines = [
            '<?xml version="1.0" encoding="UTF-8"?>',
            f'<testsuites name="rt test"{counts.attributes()} time="{_seconds(event.duration)}">',
        ]
        properties = event.testsuite_properties
        for suite in self.files.values():
            self._suite(lines, suite, 1, top=True, properties=properties)
            properties = ()  # once, as pytest writes them: a reader gathering every suite's sees each pair once
        lines.append("</testsuites>")
        return "\n".join(lines) + "\n"

    def _suite(
        self,
        lines: list[str],
        suite: _Suite,
        depth: int,
        top: bool,
        properties: Sequence[tuple[str, str]] = (),
    ) -> None:
        """A suite and what it holds. ``properties``: the run's ``record_testsuite_property`` pairs, which pytest
        writes in its one ``<testsuite>``, written in the first file's (rt's top-level suites) as its first
        child."""
        pad = "  " * depth
        counts = _Counts.of([suite])
        time = suite.duration if suite.duration is not None else sum(c.duration for c in suite.all_cases())
        line = "" if top else f' line="{suite.line}"'
        lines.append(
            f"{pad}<testsuite name={_attr(suite.name)} file={_attr(suite.file)}{line}{counts.attributes()} "
            f'time="{_seconds(time)}" hostname={_attr(self.hostname)}>'
        )
        if properties:
            lines.append(f"{pad}  <properties>")
            lines.extend(f"{pad}    <property name={_attr(n)} value={_attr(v)} />" for n, v in properties)
            lines.append(f"{pad}  </properties>")
        if suite.load_error is not None:
            error = suite.load_error
            lines.append(
                f'{pad}  <testcase name="(file failed to load)" classname={_attr(suite.file)} time="0" '
                f'file={_attr(suite.file)} line="{error.location.line if error.location else 0}" '
                'assertions="0">'
            )
            lines.append(
                f"{pad}    <error type={_attr(error.kind)} message={_attr(whole_message(error))}>"
                f"{_text(error.details or error.message)}</error>"
            )
            lines.append(f"{pad}  </testcase>")
        for entry in suite.ordered():
            if isinstance(entry, _Suite):
                self._suite(lines, entry, depth + 1, top=False)
            else:
                subresults = suite.subresults.get((entry.path, entry.run), ())
                self._case(lines, entry, depth + 1, subresults, suite.teardowns)
        lines.append(f"{pad}</testsuite>")

    def _case(
        self,
        lines: list[str],
        case: TestFinished,
        depth: int,
        subresults: Sequence[TestFinished] = (),
        teardowns: set[int] | frozenset[int] = frozenset(),
    ) -> None:
        pad = "  " * depth
        classname = " > ".join(case.path[:-1]) or case.file
        line = case.location.line if case.location is not None else 0
        opening = (
            f"{pad}<testcase name={_attr(case.path[-1])} classname={_attr(classname)} "
            f'time="{_seconds(case.duration)}" file={_attr(case.file)} line="{line}" '
            f'assertions="{case.expect_calls}"'
        )
        output: str = getattr(case, "output", "")
        body: list[str] = []
        if case.properties:
            body.append("<properties>")
            body.extend(
                f"  <property name={_attr(name)} value={_attr(value)} />" for name, value in case.properties
            )
            body.append("</properties>")
        for result in (*subresults, case):  # pytest reports the subtests first, as they end during the call
            element = _outcome_element(result, id(result) in teardowns)
            if element is not None:
                body.append(element)
        if output:
            body.append(f"<system-out>{_text(output)}</system-out>")
        if not body:
            lines.append(opening + " />")
            return
        lines.append(opening + ">")
        lines.extend(f"{pad}  {element}" for element in body)
        lines.append(f"{pad}</testcase>")

    def write(self, event: RunFinished) -> None:
        """Write the whole report at once (through a temporary file, so a reader never sees half of it)."""
        partial = self.outfile.with_name(f".{self.outfile.name}.{os.getpid()}.tmp")
        try:
            self.outfile.parent.mkdir(parents=True, exist_ok=True)
            partial.write_text(self.render(event), encoding="utf-8")
            os.replace(partial, self.outfile)
        except OSError as exc:
            raise ReportWriteError(
                f"cannot write the JUnit report to {str(self.outfile)!r}: {exc.strerror or exc}"
            ) from None
        finally:
            with contextlib.suppress(OSError):
                partial.unlink(missing_ok=True)

    def close(self) -> None:
        pass


@attrs.frozen
class _Counts:
    tests: int
    assertions: int
    failures: int
    errors: int
    skipped: int

    @classmethod
    def of(cls, suites: list[_Suite]) -> _Counts:
        cases = [case for suite in suites for case in suite.all_cases()]
        load_errors = sum(1 for suite in suites if suite.load_error is not None)
        # pytest 9 counts each subtest's result in ``tests``, those that passed too
        subresults = [result for suite in suites for result in suite.all_subresults()]
        statuses = [_status(c) for c in (*cases, *subresults)]
        return cls(
            len(cases) + len(subresults) + sum(c.subtests_passed for c in cases) + load_errors,
            sum(c.expect_calls for c in cases),
            statuses.count("fail"),
            statuses.count("error") + load_errors,
            sum(statuses.count(s) for s in _SKIPPED),
        )

    def attributes(self) -> str:
        return (
            f' tests="{self.tests}" assertions="{self.assertions}" failures="{self.failures}" '
            f'errors="{self.errors}" skipped="{self.skipped}"'
        )
